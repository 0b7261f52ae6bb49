import { enforced, honoured, ignored, NOTHING_STORED } from '../../core/parameter-fate';
import type { FamilyParameters } from '../../core/parameter-fate';

/*
 * What the `claude` CLI run does with each request field whose fate differs by family (the shared
 * rules and fates are in src/chat/chat-parameters.ts; docs/chat.md shows both). `enforced` ones
 * are the chat layer's work: the stop cut, the held JSON answer and the held tool call.
 */

const SAMPLING_NOT_TAKEN =
  "the `claude` CLI has no switch for it; IDE clients send it by default, so refusing would break them — the answer is the model's default sampling";
/** The same cell as provider_a's: neither upstream takes an output cap. */
const LIMIT_NOT_TAKEN =
  "no output cap upstream (the Codex backend refuses `max_output_tokens`; the `claude` CLI has no flag) and the gateway cannot count the model's tokens to cut honestly; the answer is not shortened, `finish_reason` is the model's";

export const PROVIDER_C_PARAMETERS: FamilyParameters = {
  messages: honoured('the prompt transcript on stdin'),
  frequency_penalty: ignored(SAMPLING_NOT_TAKEN),
  max_tokens: ignored(LIMIT_NOT_TAKEN),
  max_completion_tokens: ignored(LIMIT_NOT_TAKEN),
  parallel_tool_calls: enforced('`false`: the gateway passes on only the first tool call of the turn'),
  presence_penalty: ignored(SAMPLING_NOT_TAKEN),
  reasoning_effort: honoured(
    '`low`/`medium`/`high`/`xhigh`/`max` → `--effort`, and with it the thinking budget `MAX_THINKING_TOKENS` 4,000/10,000/31,999/31,999/31,999 for a model that thinks on a budget instead of effort levels (`claude-haiku-4-5-20251001`, where `--effort` changes nothing; an adaptive model ignores the budget); `none`: `--effort low` with `MAX_THINKING_TOKENS=0`, thinking off (`thinking: {"type":"disabled"}`) on a model that can answer without it (`claude-opus-4-8`, `claude-sonnet-5`, `claude-haiku-4-5-20251001`), adaptive at the lowest effort on one that always thinks (the 5-5 generation, `claude-fable-5`, the aliases); `minimal`: `--effort low` with `MAX_THINKING_TOKENS=1024`, the smallest thinking budget for a model that thinks on a budget (`claude-haiku-4-5-20251001`); any other value is a 400',
  ),
  response_format: enforced(
    'the `claude` CLI has no schema switch: the format goes to the model as a last system message; the gateway buffers the answer, reads one JSON object (Ajv-validated against `json_schema`) and asks again up to 2 more times before any of it is sent (a stream gets keep-alive comments meanwhile), then 422 `output_validation_failed` with `param: "response_format"` (the error chunk of a stream held past a keep-alive round); only the JSON object is written, except for a refusal (`finish_reason: "content_filter"`), written as it came and never asked again; `json_schema.description` is not given to the model (put guidance in the schema\'s own `description`s or the messages)',
  ),
  seed: ignored('the `claude` CLI takes no seed; determinism is best effort even on OpenAI'),
  service_tier: ignored('the `claude` CLI has one tier'),
  stop: enforced(
    'the `claude` CLI has no stop flag: the gateway ends the answer\'s text before the first match, never sends the stop text, `finish_reason: "stop"`; tool calls after the match still come; an answer held to `response_format` or `tool_choice` is cut before it is judged (docs/chat.md "Stop sequences")',
  ),
  // The docs row reads the same on every family: the remark is about provider_a's wire body.
  store: ignored(`${NOTHING_STORED} (provider_a always sends \`store: false\`)`),
  temperature: ignored(SAMPLING_NOT_TAKEN),
  tool_choice: enforced(
    '`required` and a forced tool are a rule line of the injected tool protocol, and the gateway holds the answer to them: nothing of it is written until a call that meets the choice arrived (a stream gets keep-alive comments meanwhile), then the answer from its start; a call of another tool than the forced one is never passed on; an answer without the call is asked again up to 2 more times (not a refusal, `finish_reason: "content_filter"`: written as it came), then 422 `output_validation_failed` with `param: "tool_choice"` (the error chunk of a stream held past a keep-alive round); `none` leaves the protocol out and drops any tool-call block the model writes',
  ),
  tools: enforced(
    'an injected protocol; fenced `agent_tool_call` blocks are parsed back into tool calls; a hosted tool (`web_search`…) is 400; a tool\'s `strict: true` is enforced too: an answer with a call its `parameters` schema refuses is asked again while nothing of it was written (3 attempts in all), else it fails with `invalid_tool_call` (docs/chat.md "Strict tools")',
  ),
  top_p: ignored(SAMPLING_NOT_TAKEN),
  verbosity: ignored('the `claude` CLI has no verbosity control; the model answers at its own length'),
  faithful: ignored("faithful mode is provider_a's"),
};
