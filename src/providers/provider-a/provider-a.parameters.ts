import { enforced, honoured, ignored, NOTHING_STORED } from '../../core/parameter-fate';
import type { FamilyParameters } from '../../core/parameter-fate';

/*
 * What the Codex Responses backend does with each request field whose fate differs by family
 * (the shared rules and fates are in src/chat/chat-parameters.ts; docs/chat.md shows both).
 */

const SAMPLING_NOT_TAKEN =
  "the Codex backend refuses sampling fields (its reasoning models sample their own way); IDE clients send them by default, so refusing would break them — the answer is the model's default sampling";
/** The same cell as provider_c's: neither upstream takes an output cap. */
const LIMIT_NOT_TAKEN =
  "no output cap upstream (the Codex backend refuses `max_output_tokens`; the `claude` CLI has no flag) and the gateway cannot count the model's tokens to cut honestly; the answer is not shortened, `finish_reason` is the model's";

export const PROVIDER_A_PARAMETERS: FamilyParameters = {
  messages: honoured('Responses `input` items and `instructions`'),
  frequency_penalty: ignored(SAMPLING_NOT_TAKEN),
  max_tokens: ignored(LIMIT_NOT_TAKEN),
  max_completion_tokens: ignored(LIMIT_NOT_TAKEN),
  parallel_tool_calls: honoured(
    "`parallel_tool_calls` (only with tools); with `faithful: true`, the profile's, and `false` to a lite-shape model as from the Codex CLI",
  ),
  presence_penalty: ignored(SAMPLING_NOT_TAKEN),
  reasoning_effort: honoured("`reasoning.effort`, checked against the model's efforts"),
  response_format: honoured(
    '`text.format`: `{type: "json_schema", name, schema, strict}` as `codex exec --output-schema` sends it (with `json_schema.description` when sent), or `{type: "json_object"}`',
  ),
  seed: ignored('the Codex backend takes no seed; determinism is best effort even on OpenAI'),
  service_tier: ignored(
    'the tier comes from the model id: `-fast` ids use the priority tier (docs/chat.md "Model ids")',
  ),
  stop: enforced(
    'the Responses API has no stop sequences: the gateway ends the answer\'s text before the first match, never sends the stop text, `finish_reason: "stop"`; tool calls after the match still come; with a JSON `response_format` the answer is held, and one the cut leaves without its whole object is asked again, then 422 (docs/chat.md "Stop sequences")',
  ),
  store: ignored(`${NOTHING_STORED} (provider_a always sends \`store: false\`)`),
  temperature: ignored(SAMPLING_NOT_TAKEN),
  tool_choice: honoured("`tool_choice`, forced tools flattened; with `faithful: true`, the profile's"),
  tools: honoured(
    'flat function and custom tools (a tool without `type` as the function it is read as, on both request shapes), a function\'s `strict` as sent, which the backend holds its calls to; hosted tools (`web_search`…) as sent on classic-shape models, 400 on lite-shape ones (docs/providers.md "Two request shapes")',
  ),
  top_p: ignored(SAMPLING_NOT_TAKEN),
  verbosity: honoured(
    "`text.verbosity` (overrides the catalog's); ignored for a model the live list marks `support_verbosity: false`, which gets no `text.verbosity` at all, as from the Codex CLI",
  ),
  faithful: honoured(
    "`true`: the captured CLI profile replaces the client's tools, `tool_choice` and `parallel_tool_calls` (faithful mode)",
  ),
};
