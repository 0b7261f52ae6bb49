import { enforced, honoured, ignored, NOTHING_STORED } from '../../core/parameter-fate';
import type { FamilyParameters } from '../../core/parameter-fate';

/*
 * What Code Assist does with each request field whose fate differs by family (the shared rules
 * and fates are in src/chat/chat-parameters.ts; docs/chat.md shows both). Sampling fields arrive
 * at the request builder only when honoured here.
 */

const PENALTY_NOT_TAKEN =
  "Gemini 2.5 and later refuse penalties (`Penalty is not enabled for models/…`) and the Gemini CLI never sends them; IDE clients send them by default, so refusing would break them — the answer is the model's default sampling";

export const PROVIDER_B_PARAMETERS: FamilyParameters = {
  messages: honoured(
    "`contents` and `systemInstruction`; a history call's `function.arguments` must be the JSON text of an object (or blank): Gemini takes only an object, so anything else is a 400 naming `messages.i.tool_calls.j.function.arguments`",
  ),
  frequency_penalty: ignored(PENALTY_NOT_TAKEN),
  max_tokens: honoured(
    '`generationConfig.maxOutputTokens`, at most the model\'s `max_output_tokens` (`GET /v1/models`; `max_completion_tokens` wins when both are sent); a cut answer ends with `finish_reason: "length"`',
  ),
  max_completion_tokens: honoured(
    '`generationConfig.maxOutputTokens`, at most the model\'s `max_output_tokens` (`GET /v1/models`); a cut answer ends with `finish_reason: "length"`',
  ),
  parallel_tool_calls: enforced('`false`: the gateway passes on only the first tool call of the turn'),
  presence_penalty: ignored(PENALTY_NOT_TAKEN),
  reasoning_effort: honoured(
    'only `none`: no `thinkingConfig` (thoughts off). `minimal`, `low`, `medium`, `high` and `xhigh` are accepted and not sent, as from the Gemini CLI, which sends no effort to Gemini 2.5 and its fixed `thinkingLevel: "HIGH"` to Gemini 3 (thoughts stay on); any other value is 400 naming the allowed ones',
  ),
  response_format: honoured(
    '`generationConfig.responseMimeType: "application/json"` with `responseJsonSchema` (as Gemini CLI\'s `generateJson`), or the MIME type alone for `json_object`; `json_schema.description` is not sent (Code Assist has no field for it: put guidance in the schema\'s own `description`s or the messages)',
  ),
  seed: honoured('`generationConfig.seed`'),
  service_tier: ignored('Code Assist has one tier'),
  stop: honoured('`generationConfig.stopSequences`'),
  // The docs row reads the same on every family: the remark is about provider_a's wire body.
  store: ignored(`${NOTHING_STORED} (provider_a always sends \`store: false\`)`),
  temperature: honoured('`generationConfig.temperature`'),
  tool_choice: honoured('`toolConfig.functionCallingConfig`'),
  tools: honoured(
    '`functionDeclarations` as `parametersJsonSchema` (local `$ref`s inlined under every keyword that holds a schema, metadata and `strict` dropped: docs/upstream/provider-b.md §7.2); a hosted tool (`web_search`…) is 400; a tool\'s `strict: true` is not sent (a declaration has no such field) and is enforced by the gateway: an answer with a call its `parameters` schema refuses is asked again while nothing of it was written (3 attempts in all), else it fails with `invalid_tool_call` (docs/chat.md "Strict tools")',
  ),
  top_p: honoured('`generationConfig.topP`'),
  verbosity: ignored('Code Assist has no verbosity control; the model answers at its own length'),
  faithful: ignored("faithful mode is provider_a's"),
};
