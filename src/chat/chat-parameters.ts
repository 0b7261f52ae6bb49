import type { ProviderId } from '../core/provider-id';
import { familyIds } from '../core/family-registry';
import type { ResponseFormat, SamplingOptions } from '../providers/shared/provider-adapter';

/*
 * THE table of Chat Completions request fields: every field the `openai` SDK's
 * ChatCompletionCreateParams can send, plus the gateway's own `faithful`, with its fate on each
 * family. It is the single source of
 *   - the parser's shape rules and refusals (`readParameters` in chat-request.parser.ts reads `invalid`,
 *     `unsupported`, `read`),
 *   - per-family translation: an adapter is handed only the values whose fate on its family is
 *     `honoured` (upstreamParameters below); `enforced` ones are done by the chat layer,
 *   - refusals: a field is `refused` on every family or on none (chat-parameters.spec.ts holds the
 *     table to it), so the parser's `unsupported` rule answers 400 before the model is even resolved,
 *   - the generated section of docs/chat.md (scripts/gen-chat-docs.mjs; a test fails when the doc
 *     and this table disagree).
 * A field missing here is not an SDK field (the spec checks the SDK's type): it is
 * ignored like any unknown field.
 */

/** What happens to a field on one family. */
export type FateKind =
  /** The upstream does it; the note says with which upstream field or flag. */
  | 'honoured'
  /** The gateway does it itself (e.g. cutting the stream at a stop sequence). */
  | 'enforced'
  /** Accepted and not acted on, because it cannot change the answer (or is documented why not). */
  | 'ignored'
  /** A value that asks for something (the note says which) is answered 400 naming the field. */
  | 'refused';

export interface Fate {
  readonly fate: FateKind;
  /** How (honoured, enforced), why (ignored) or which values (refused): the doc's cell. */
  readonly note: string;
}

/** The values adapters may receive: sampling fields and the JSON output format. */
export interface ChatParameterValues extends SamplingOptions {
  readonly responseFormat?: ResponseFormat;
}

export type ParameterKey = keyof ChatParameterValues;

export interface ChatParameter {
  /** The request body field. */
  readonly name: string;
  /** Accepted JSON types, for the doc. */
  readonly type: string;
  /**
   * The rule a present, non-null value breaks (OpenAI's own bounds for the field), or undefined.
   * → 400 `invalid_request` with `param` = name. Messages name the rule, never the value.
   */
  readonly invalid?: (value: unknown) => string | undefined;
  /** Why a well-formed value cannot be served by any family, or undefined. → 400 `unsupported_parameter`. */
  readonly unsupported?: (value: unknown) => string | undefined;
  /** Where a well-formed value goes among the values adapters receive, and its parsed form. */
  readonly key?: ParameterKey;
  readonly read?: (value: unknown) => unknown;
  /** Another field filling the same key wins over this one (`max_tokens` yields to `max_completion_tokens`). */
  readonly yields?: true;
  readonly families: Readonly<Record<ProviderId, Fate>>;
}

// ── Fates, shorthand ────────────────────────────────────────────────────────────────────

const honoured = (note: string): Fate => ({ fate: 'honoured', note });
const enforced = (note: string): Fate => ({ fate: 'enforced', note });
const ignored = (note: string): Fate => ({ fate: 'ignored', note });
const refused = (note: string): Fate => ({ fate: 'refused', note });
const everywhere = (fate: Fate): Record<ProviderId, Fate> => ({ provider_a: fate, provider_b: fate, provider_c: fate });

// ── Shape rules ─────────────────────────────────────────────────────────────────────────

const numberIn = (low: number, high: number) => (value: unknown) =>
  typeof value === 'number' && Number.isFinite(value) && value >= low && value <= high
    ? undefined
    : `must be a number between ${low} and ${high}`;
const positiveInteger = (value: unknown) =>
  Number.isSafeInteger(value) && (value as number) >= 1 ? undefined : 'must be a positive integer';
const boolean = (value: unknown) => (typeof value === 'boolean' ? undefined : 'must be a boolean');
const object = (value: unknown) =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? undefined : 'must be an object';
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** OpenAI allows up to 4 stop sequences; our bound on their length keeps the matcher linear. */
export const MAX_STOP_SEQUENCES = 4;
export const MAX_STOP_LENGTH = 256;

function stopRule(value: unknown): string | undefined {
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.length > MAX_STOP_SEQUENCES)
    return `must be a string or an array of at most ${MAX_STOP_SEQUENCES} strings`;
  for (const item of list) {
    if (typeof item !== 'string' || item === '' || item.length > MAX_STOP_LENGTH)
      return `entries must be non-empty strings of at most ${MAX_STOP_LENGTH} characters`;
  }
  return undefined;
}

const readStop = (value: unknown) => {
  const list = typeof value === 'string' ? [value] : (value as string[]);
  return list.length > 0 ? list : undefined;
};

/** The Responses API's and OpenAI's own rule for a schema name. */
const SCHEMA_NAME = /^[A-Za-z0-9_-]{1,64}$/;

function responseFormatRule(value: unknown): string | undefined {
  if (!isObject(value)) return 'must be an object';
  if (value.type === 'text' || value.type === 'json_object') return undefined;
  if (value.type !== 'json_schema') return 'type must be "text", "json_object" or "json_schema"';
  const spec = value.json_schema;
  if (!isObject(spec)) return 'json_schema must be an object';
  if (typeof spec.name !== 'string' || !SCHEMA_NAME.test(spec.name))
    return 'json_schema.name must match ^[A-Za-z0-9_-]{1,64}$';
  if (spec.schema !== undefined && spec.schema !== null && !isObject(spec.schema))
    return 'json_schema.schema must be an object';
  if (spec.strict !== undefined && spec.strict !== null && typeof spec.strict !== 'boolean')
    return 'json_schema.strict must be a boolean';
  if (spec.description !== undefined && spec.description !== null && typeof spec.description !== 'string')
    return 'json_schema.description must be a string';
  return undefined;
}

/** `text` asks for nothing; a `json_schema` without a schema is plain JSON mode. */
function readResponseFormat(value: unknown): ResponseFormat | undefined {
  const format = value as { type: string; json_schema?: Record<string, unknown> };
  if (format.type === 'text') return undefined;
  const spec = format.json_schema;
  if (format.type === 'json_object' || !isObject(spec?.schema)) return { type: 'json_object' };
  return {
    type: 'json_schema',
    name: spec.name as string,
    schema: spec.schema,
    strict: spec.strict === true,
    ...(typeof spec.description === 'string' ? { description: spec.description } : {}),
  };
}

// ── The table ───────────────────────────────────────────────────────────────────────────

const NOTHING_STORED =
  "the gateway stores nothing and the upstream login is the user's own; it cannot change the answer";
const CACHE_ONLY =
  'prompt caching only changes cost and latency, never the answer; the gateway derives its own per-chat cache key (docs/providers.md "Conversation identity")';
const SAMPLING_NOT_TAKEN_A =
  "the Codex backend refuses sampling fields (its reasoning models sample their own way); IDE clients send them by default, so refusing would break them — the answer is the model's default sampling";
const SAMPLING_NOT_TAKEN_C =
  "the `claude` CLI has no switch for it; IDE clients send it by default, so refusing would break them — the answer is the model's default sampling";
const LIMIT_NOT_TAKEN =
  "no output cap upstream (the Codex backend refuses `max_output_tokens`; the `claude` CLI has no flag) and the gateway cannot count the model's tokens to cut honestly; the answer is not shortened, `finish_reason` is the model's";

/** A sampling field Code Assist takes as `upstream` and the other two families cannot. */
function codeAssistSampling(
  name: string,
  type: string,
  invalid: (value: unknown) => string | undefined,
  key: ParameterKey,
  upstream: string,
): ChatParameter {
  return {
    name,
    type,
    invalid,
    key,
    read: (value) => value,
    families: {
      provider_a: ignored(SAMPLING_NOT_TAKEN_A),
      provider_b: honoured(`\`${upstream}\``),
      provider_c: ignored(SAMPLING_NOT_TAKEN_C),
    },
  };
}

/** A field whose every value asks for something no family can give. */
function refusedEverywhere(name: string, type: string, what: string, why: string): ChatParameter {
  return {
    name,
    type,
    unsupported: () => `${what} is not supported: ${why}`,
    families: everywhere(refused(`any value: ${why}`)),
  };
}

export const CHAT_PARAMETERS: readonly ChatParameter[] = [
  {
    name: 'messages',
    type: 'array',
    families: {
      provider_a: honoured('Responses `input` items and `instructions`'),
      provider_b: honoured('`contents` and `systemInstruction`'),
      provider_c: honoured('the prompt transcript on stdin'),
    },
  },
  {
    name: 'model',
    type: 'string',
    families: everywhere(honoured('the catalog id resolved to the upstream model (docs/chat.md "Model ids")')),
  },
  refusedEverywhere('audio', 'object', 'audio output', 'no family produces audio'),
  codeAssistSampling(
    'frequency_penalty',
    'number (−2…2)',
    numberIn(-2, 2),
    'frequencyPenalty',
    'generationConfig.frequencyPenalty',
  ),
  {
    name: 'function_call',
    type: 'string or object',
    unsupported: (value) =>
      value === 'none' || value === 'auto'
        ? undefined
        : 'the deprecated function_call is not supported; send tool_choice',
    families: everywhere(
      refused('a forced function (the deprecated form of `tool_choice`); `"none"`/`"auto"` are accepted and ignored'),
    ),
  },
  {
    name: 'functions',
    type: 'array',
    unsupported: (value) =>
      Array.isArray(value) && value.length === 0 ? undefined : 'the deprecated functions are not supported; send tools',
    families: everywhere(refused('a non-empty list (the deprecated form of `tools`)')),
  },
  {
    name: 'logit_bias',
    type: 'object',
    invalid: object,
    unsupported: (value) =>
      Object.keys(value as object).length === 0
        ? undefined
        : 'logit_bias is not supported: no upstream family takes token biases',
    families: everywhere(refused('a non-empty map: no upstream takes token biases')),
  },
  {
    name: 'logprobs',
    type: 'boolean',
    invalid: boolean,
    unsupported: (value) =>
      value === true ? 'logprobs are not supported: no upstream family returns token log probabilities' : undefined,
    families: everywhere(refused('`true`: no family returns token log probabilities (`false` is fine)')),
  },
  {
    name: 'max_tokens',
    type: 'integer ≥ 1',
    invalid: positiveInteger,
    key: 'maxTokens',
    read: (value) => value,
    yields: true,
    families: {
      provider_a: ignored(LIMIT_NOT_TAKEN),
      provider_b: honoured(
        '`generationConfig.maxOutputTokens` (`max_completion_tokens` wins when both are sent); a cut answer ends with `finish_reason: "length"`',
      ),
      provider_c: ignored(LIMIT_NOT_TAKEN),
    },
  },
  {
    name: 'max_completion_tokens',
    type: 'integer ≥ 1',
    invalid: positiveInteger,
    key: 'maxTokens',
    read: (value) => value,
    families: {
      provider_a: ignored(LIMIT_NOT_TAKEN),
      provider_b: honoured('`generationConfig.maxOutputTokens`; a cut answer ends with `finish_reason: "length"`'),
      provider_c: ignored(LIMIT_NOT_TAKEN),
    },
  },
  { name: 'metadata', type: 'object', families: everywhere(ignored(`tags for stored completions: ${NOTHING_STORED}`)) },
  {
    name: 'modalities',
    type: 'array of strings',
    unsupported: (value) =>
      Array.isArray(value) && value.every((item) => item === 'text')
        ? undefined
        : 'only the text modality is supported',
    families: everywhere(refused('anything but `["text"]`: answers are text only')),
  },
  refusedEverywhere('moderation', 'object', 'moderation', 'no family runs OpenAI moderation or returns its results'),
  {
    name: 'n',
    type: 'integer ≥ 1',
    invalid: positiveInteger,
    unsupported: (value) =>
      value === 1 ? undefined : 'only one choice is supported (n must be 1): no upstream family returns several',
    families: everywhere(refused('anything but 1: every family returns one choice')),
  },
  {
    name: 'parallel_tool_calls',
    type: 'boolean',
    families: {
      provider_a: honoured('`parallel_tool_calls` (only with tools)'),
      provider_b: enforced('`false`: the gateway passes on only the first tool call of the turn'),
      provider_c: enforced('`false`: the gateway passes on only the first tool call of the turn'),
    },
  },
  {
    name: 'prediction',
    type: 'object',
    families: everywhere(ignored('predicted output only speeds generation up on OpenAI; it never changes the answer')),
  },
  codeAssistSampling(
    'presence_penalty',
    'number (−2…2)',
    numberIn(-2, 2),
    'presencePenalty',
    'generationConfig.presencePenalty',
  ),
  { name: 'prompt_cache_key', type: 'string', families: everywhere(ignored(CACHE_ONLY)) },
  { name: 'prompt_cache_options', type: 'object', families: everywhere(ignored(CACHE_ONLY)) },
  { name: 'prompt_cache_retention', type: 'string', families: everywhere(ignored(CACHE_ONLY)) },
  {
    name: 'reasoning_effort',
    type: 'string',
    families: {
      provider_a: honoured("`reasoning.effort`, checked against the model's efforts"),
      provider_b: honoured('`none` turns thoughts off (`thinkingConfig` omitted); other values keep them on'),
      provider_c: honoured('`low`/`medium`/`high` → `--effort`; other values: no flag'),
    },
  },
  {
    name: 'response_format',
    type: 'object',
    invalid: responseFormatRule,
    key: 'responseFormat',
    read: readResponseFormat,
    families: {
      provider_a: honoured(
        '`text.format`: `{type: "json_schema", name, schema, strict}` as `codex exec --output-schema` sends it, or `{type: "json_object"}`',
      ),
      provider_b: honoured(
        '`generationConfig.responseMimeType: "application/json"` with `responseJsonSchema` (as Gemini CLI\'s `generateJson`), or the MIME type alone for `json_object`',
      ),
      provider_c: enforced(
        'the `claude` CLI has no schema switch: the format goes to the model as a last system message; the gateway buffers the answer, reads one JSON object (Ajv-validated against `json_schema`) and asks again up to 2 more times before anything is sent, then 422 `output_validation_failed`; only the JSON object is written',
      ),
    },
  },
  {
    name: 'safety_identifier',
    type: 'string',
    families: everywhere(ignored(`an abuse-monitoring id for OpenAI: ${NOTHING_STORED}`)),
  },
  {
    name: 'seed',
    type: 'integer',
    invalid: (value) => (Number.isSafeInteger(value) ? undefined : 'must be an integer'),
    key: 'seed',
    read: (value) => value,
    families: {
      provider_a: ignored('the Codex backend takes no seed; determinism is best effort even on OpenAI'),
      provider_b: honoured('`generationConfig.seed`'),
      provider_c: ignored('the `claude` CLI takes no seed; determinism is best effort even on OpenAI'),
    },
  },
  {
    name: 'service_tier',
    type: 'string',
    families: {
      provider_a: ignored(
        'the tier comes from the model id: `-fast` ids use the priority tier (docs/chat.md "Model ids")',
      ),
      provider_b: ignored('Code Assist has one tier'),
      provider_c: ignored('the `claude` CLI has one tier'),
    },
  },
  {
    name: 'stop',
    type: 'string or array of ≤ 4 strings (each 1…256 characters)',
    invalid: stopRule,
    key: 'stop',
    read: readStop,
    families: {
      provider_a: enforced(
        'the Responses API has no stop sequences: the gateway ends the answer before the first match, never sends the stop text, `finish_reason: "stop"`',
      ),
      provider_b: honoured('`generationConfig.stopSequences`'),
      provider_c: enforced(
        'the `claude` CLI has no stop flag: the gateway ends the answer before the first match, never sends the stop text, `finish_reason: "stop"`',
      ),
    },
  },
  {
    name: 'store',
    type: 'boolean',
    families: everywhere(ignored(`${NOTHING_STORED} (provider_a always sends \`store: false\`)`)),
  },
  {
    name: 'stream',
    type: 'boolean',
    families: everywhere(
      enforced('SSE chunks or one `chat.completion`, rendered by the gateway from the same upstream events'),
    ),
  },
  {
    name: 'stream_options',
    type: 'object',
    families: everywhere(
      enforced('`include_usage` adds the usage chunk; `include_obfuscation` is ignored (the gateway adds no padding)'),
    ),
  },
  codeAssistSampling('temperature', 'number (0…2)', numberIn(0, 2), 'temperature', 'generationConfig.temperature'),
  {
    name: 'tool_choice',
    type: 'string or object',
    families: {
      provider_a: honoured('`tool_choice`, forced tools flattened'),
      provider_b: honoured('`toolConfig.functionCallingConfig`'),
      provider_c: enforced('a rule line of the injected tool protocol; `none` disables the bridge'),
    },
  },
  {
    name: 'tools',
    type: 'array of objects',
    families: {
      provider_a: honoured('flat function and custom tools'),
      provider_b: honoured('`functionDeclarations` (schemas cleaned of keywords the backend rejects)'),
      provider_c: enforced('an injected protocol; fenced `agent_tool_call` blocks are parsed back into tool calls'),
    },
  },
  {
    name: 'top_logprobs',
    type: 'integer (0…20)',
    invalid: (value) =>
      Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= 20
        ? undefined
        : 'must be an integer between 0 and 20',
    unsupported: (value) =>
      value === 0 ? undefined : 'logprobs are not supported: no upstream family returns token log probabilities',
    families: everywhere(refused('anything but 0: no family returns log probabilities')),
  },
  codeAssistSampling('top_p', 'number (0…1)', numberIn(0, 1), 'topP', 'generationConfig.topP'),
  {
    name: 'user',
    type: 'string',
    families: everywhere(ignored(`an end-user id for OpenAI's abuse monitoring: ${NOTHING_STORED}`)),
  },
  {
    name: 'verbosity',
    type: 'string',
    families: {
      provider_a: honoured("`text.verbosity` (overrides the catalog's)"),
      provider_b: ignored('Code Assist has no verbosity control; the model answers at its own length'),
      provider_c: ignored('the `claude` CLI has no verbosity control; the model answers at its own length'),
    },
  },
  refusedEverywhere('web_search_options', 'object', 'web search', 'no family searches the web for the client'),
  {
    name: 'faithful',
    type: 'boolean (gateway extension)',
    families: {
      provider_a: honoured("`true`: the captured CLI profile replaces the client's tools (faithful mode)"),
      provider_b: ignored("faithful mode is provider_a's"),
      provider_c: ignored("faithful mode is provider_a's"),
    },
  },
];

// ── Derived views (computed once) ─────────────────────────────────────────────────────

/** The entries the parser must look at (a rule, a refusal or a value to read), by field name. */
export const CHECKED_PARAMETERS: ReadonlyMap<string, ChatParameter> = new Map(
  CHAT_PARAMETERS.filter((entry) => entry.invalid ?? entry.unsupported ?? entry.key).map((entry) => [
    entry.name,
    entry,
  ]),
);

/** One value per family registered when this module loaded; a family registered later has none. */
const byFamily = <T>(make: (provider: ProviderId) => T): Partial<Record<ProviderId, T>> =>
  Object.fromEntries(familyIds().map((provider) => [provider, make(provider)]));

/** Per family: the value keys an adapter receives (fate `honoured`). */
const HONOURED_KEYS = byFamily(
  (provider) =>
    new Set(
      CHAT_PARAMETERS.filter((entry) => entry.key && entry.families[provider]?.fate === 'honoured').map(
        (entry) => entry.key!,
      ),
    ),
);

export function fateOf(provider: ProviderId, name: string): Fate | undefined {
  return CHAT_PARAMETERS.find((entry) => entry.name === name)?.families[provider];
}

/** Per family: whether the chat layer cuts the answer at `stop` itself (the upstream cannot stop). */
export const ENFORCED_STOP = byFamily((provider) => fateOf(provider, 'stop')?.fate === 'enforced');
/** Per family: whether the chat layer holds the answer to `response_format` itself (json-answer.ts). */
export const ENFORCED_JSON = byFamily((provider) => fateOf(provider, 'response_format')?.fate === 'enforced');

const NONE_HONOURED: ReadonlySet<ParameterKey> = new Set();

/** Only the values this family honours upstream; the same object when nothing is dropped. */
export function upstreamParameters(provider: ProviderId, values: ChatParameterValues): ChatParameterValues {
  // A family the table has no column for honours none.
  const honouredKeys = HONOURED_KEYS[provider] ?? NONE_HONOURED;
  let kept: Record<string, unknown> | undefined;
  for (const key in values) {
    if (honouredKeys.has(key as ParameterKey)) continue;
    kept ??= { ...values };
    delete kept[key];
  }
  return (kept as ChatParameterValues | undefined) ?? values;
}
