import type { Family } from '../core/family';
import { familyOf } from '../core/family-registry';
import type { Fate } from '../core/parameter-fate';
import {
  enforced,
  FATE_KINDS,
  honoured,
  ignored,
  NOTHING_STORED,
  PER_FAMILY_FIELDS,
  refused,
} from '../core/parameter-fate';
import type { ProviderId } from '../core/provider-id';
import { VERBOSITIES } from '../core/resolved-model';
import { codePointLength } from '../common/text';
import type { ResponseFormat, SamplingOptions } from '../providers/shared/provider-adapter';

/*
 * THE table of Chat Completions request fields: every field the `openai` SDK's
 * ChatCompletionCreateParams can send, plus the gateway's own `faithful`, with its fate on each
 * family: here when it is the same on every family (`everywhere`), else in each family's own
 * declaration (`Family.parameters`, for the fields in PER_FAMILY_FIELDS). It is the single source of
 *   - the parser's shape rules and refusals (`readParameters` in chat-request.parser.ts reads `invalid`,
 *     `unsupported`, `read`),
 *   - per-family translation: an adapter is handed only the values whose fate on its family is
 *     `honoured` (upstreamParameters below); `enforced` ones are done by the chat layer,
 *   - refusals: a field is `refused` on every family or on none (chat-request.parser.spec.ts holds the
 *     table to it), so the parser's `unsupported` rule answers 400 before the model is even resolved,
 *   - the generated section of docs/chat.md (scripts/gen-chat-docs.mjs; a test fails when the doc
 *     and this table disagree).
 * A field missing here is not an SDK field (the spec checks the SDK's type): it is
 * ignored like any unknown field.
 */

export type { Fate, FateKind } from '../core/parameter-fate';

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
  /**
   * Its fate on every family, when that is the same everywhere. Absent for the fields listed in
   * PER_FAMILY_FIELDS (core/parameter-fate.ts): each family declares those in `Family.parameters`.
   */
  readonly everywhere?: Fate;
}

// ── Shape rules ─────────────────────────────────────────────────────────────────────────

const numberIn = (low: number, high: number) => (value: unknown) =>
  typeof value === 'number' && Number.isFinite(value) && value >= low && value <= high
    ? undefined
    : `must be a number between ${low} and ${high}`;
const positiveInteger = (value: unknown) =>
  Number.isSafeInteger(value) && (value as number) >= 1 ? undefined : 'must be a positive integer';
const boolean = (value: unknown) => (typeof value === 'boolean' ? undefined : 'must be a boolean');
const string = (value: unknown) => (typeof value === 'string' ? undefined : 'must be a string');
const object = (value: unknown) =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? undefined : 'must be an object';
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** OpenAI's verbosity words: any other is refused on every family rather than sent on or dropped. */
const VERBOSITY_WORDS: ReadonlySet<string> = new Set(VERBOSITIES);

/**
 * OpenAI's service tiers for Chat Completions (the `openai` SDK's `service_tier` type; the parser
 * spec holds the two equal): any other word is refused on every family rather than dropped.
 */
export const SERVICE_TIERS: readonly string[] = ['auto', 'default', 'flex', 'scale', 'priority', 'fast'];
const SERVICE_TIER_SET: ReadonlySet<string> = new Set(SERVICE_TIERS);

/** OpenAI allows up to 4 stop sequences; our bound on their length keeps the matcher linear. */
export const MAX_STOP_SEQUENCES = 4;
export const MAX_STOP_LENGTH = 256;

function stopRule(value: unknown): string | undefined {
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.length > MAX_STOP_SEQUENCES)
    return `must be a string or an array of at most ${MAX_STOP_SEQUENCES} strings`;
  for (const item of list) {
    // Characters are code points, as for identifiers: UTF-16 length only bounds them from above.
    if (
      typeof item !== 'string' ||
      item === '' ||
      (item.length > MAX_STOP_LENGTH && codePointLength(item) > MAX_STOP_LENGTH)
    )
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

const CACHE_ONLY =
  'prompt caching only changes cost and latency, never the answer; the gateway derives its own per-chat cache key (docs/providers.md "Conversation identity")';

/** A sampling field: its bounds and key here, its fate on each family in the family's declaration. */
function samplingField(
  name: string,
  type: string,
  invalid: (value: unknown) => string | undefined,
  key: ParameterKey,
): ChatParameter {
  return { name, type, invalid, key, read: (value) => value };
}

/** A field whose every value asks for something no family can give: the fix is to leave it out. */
function refusedEverywhere(name: string, type: string, what: string, why: string): ChatParameter {
  return {
    name,
    type,
    unsupported: () => `${what} is not supported: ${why}; leave ${name} out`,
    everywhere: refused(`any value: ${why}`),
  };
}

export const CHAT_PARAMETERS: readonly ChatParameter[] = [
  { name: 'messages', type: 'array' },
  {
    name: 'model',
    type: 'string',
    everywhere: honoured('the catalog id resolved to the upstream model (docs/chat.md "Model ids")'),
  },
  refusedEverywhere('audio', 'object', 'audio output', 'no family produces audio'),
  samplingField('frequency_penalty', 'number (−2…2)', numberIn(-2, 2), 'frequencyPenalty'),
  {
    name: 'function_call',
    type: 'string or object',
    unsupported: (value) =>
      value === 'none' || value === 'auto'
        ? undefined
        : 'the deprecated function_call is not supported; send tool_choice',
    everywhere: refused(
      'a forced function (the deprecated form of `tool_choice`); `"none"`/`"auto"` are accepted and ignored',
    ),
  },
  {
    name: 'functions',
    type: 'array',
    unsupported: (value) =>
      Array.isArray(value) && value.length === 0 ? undefined : 'the deprecated functions are not supported; send tools',
    everywhere: refused('a non-empty list (the deprecated form of `tools`)'),
  },
  {
    name: 'logit_bias',
    type: 'object',
    invalid: object,
    unsupported: (value) =>
      Object.keys(value as object).length === 0
        ? undefined
        : 'a non-empty logit_bias is not supported: no upstream family takes token biases; send {} or leave logit_bias out',
    everywhere: refused('a non-empty map: no upstream takes token biases'),
  },
  {
    name: 'logprobs',
    type: 'boolean',
    invalid: boolean,
    unsupported: (value) =>
      value === true
        ? 'logprobs: true is not supported: no upstream family returns token log probabilities; send false or leave logprobs out'
        : undefined,
    everywhere: refused('`true`: no family returns token log probabilities (`false` is fine)'),
  },
  {
    name: 'max_tokens',
    type: 'integer ≥ 1',
    invalid: positiveInteger,
    key: 'maxTokens',
    read: (value) => value,
    yields: true,
  },
  {
    name: 'max_completion_tokens',
    type: 'integer ≥ 1',
    invalid: positiveInteger,
    key: 'maxTokens',
    read: (value) => value,
  },
  {
    name: 'metadata',
    type: 'object',
    invalid: object,
    everywhere: enforced(
      'its `conversation_id`, `chat_id`, `thread_id` or `session_id` (the first present, when the body itself has none) names the chat: the agent queue key, the prompt-cache key and the upstream session follow it (docs/providers.md "Conversation identity"); any other key is a tag for stored completions, and the gateway stores nothing',
    ),
  },
  {
    name: 'modalities',
    type: 'array of strings',
    invalid: (value) =>
      Array.isArray(value) && value.every((item) => typeof item === 'string')
        ? undefined
        : 'must be an array of strings',
    // An empty list asks for no output type beyond the default, text: OpenAI's own schema sets
    // no minimum length, so it is taken, as an empty `functions` or `stop` is.
    unsupported: (value) =>
      Array.isArray(value) && value.every((item) => item === 'text')
        ? undefined
        : 'modalities asks for output other than text, which is not supported: answers are text only; send ["text"] or leave modalities out',
    everywhere: refused('anything but `["text"]` or `[]`: answers are text only'),
  },
  refusedEverywhere('moderation', 'object', 'moderation', 'no family runs OpenAI moderation or returns its results'),
  {
    name: 'n',
    type: 'integer ≥ 1',
    invalid: positiveInteger,
    unsupported: (value) =>
      value === 1
        ? undefined
        : 'only one choice is supported (n must be 1): no upstream family returns several; send 1 or leave n out',
    everywhere: refused('anything but 1: every family returns one choice'),
  },
  { name: 'parallel_tool_calls', type: 'boolean' },
  {
    name: 'prediction',
    type: 'object',
    invalid: object,
    everywhere: ignored('predicted output only speeds generation up on OpenAI; it never changes the answer'),
  },
  samplingField('presence_penalty', 'number (−2…2)', numberIn(-2, 2), 'presencePenalty'),
  { name: 'prompt_cache_key', type: 'string', invalid: string, everywhere: ignored(CACHE_ONLY) },
  { name: 'prompt_cache_options', type: 'object', invalid: object, everywhere: ignored(CACHE_ONLY) },
  { name: 'prompt_cache_retention', type: 'string', invalid: string, everywhere: ignored(CACHE_ONLY) },
  { name: 'reasoning_effort', type: 'string' },
  {
    name: 'response_format',
    type: 'object',
    invalid: responseFormatRule,
    key: 'responseFormat',
    read: readResponseFormat,
  },
  {
    name: 'safety_identifier',
    type: 'string',
    invalid: string,
    everywhere: ignored(`an abuse-monitoring id for OpenAI: ${NOTHING_STORED}`),
  },
  {
    name: 'seed',
    type: 'integer',
    invalid: (value) => (Number.isSafeInteger(value) ? undefined : 'must be an integer'),
    key: 'seed',
    read: (value) => value,
  },
  {
    name: 'service_tier',
    type: `string (${SERVICE_TIERS.map((tier) => `\`${tier}\``).join(', ')})`,
    invalid: (value) =>
      typeof value === 'string' && SERVICE_TIER_SET.has(value)
        ? undefined
        : `must be one of ${SERVICE_TIERS.join(', ')}`,
  },
  {
    name: 'stop',
    type: 'string or array of ≤ 4 strings (each 1…256 characters)',
    invalid: stopRule,
    key: 'stop',
    read: readStop,
  },
  { name: 'store', type: 'boolean', invalid: boolean },
  {
    name: 'stream',
    type: 'boolean',
    everywhere: enforced('SSE chunks or one `chat.completion`, rendered by the gateway from the same upstream events'),
  },
  {
    name: 'stream_options',
    type: 'object',
    everywhere: enforced(
      '`include_usage` adds the usage chunk; `include_obfuscation` is ignored (the gateway adds no padding)',
    ),
  },
  samplingField('temperature', 'number (0…2)', numberIn(0, 2), 'temperature'),
  { name: 'tool_choice', type: 'string or object' },
  { name: 'tools', type: 'array of objects' },
  {
    name: 'top_logprobs',
    type: 'integer (0…20)',
    invalid: (value) =>
      Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= 20
        ? undefined
        : 'must be an integer between 0 and 20',
    unsupported: (value) =>
      value === 0
        ? undefined
        : 'top_logprobs above 0 is not supported: no upstream family returns token log probabilities; send 0 or leave top_logprobs out',
    everywhere: refused('anything but 0: no family returns log probabilities'),
  },
  samplingField('top_p', 'number (0…1)', numberIn(0, 1), 'topP'),
  {
    name: 'user',
    type: 'string',
    invalid: string,
    everywhere: ignored(`an end-user id for OpenAI's abuse monitoring: ${NOTHING_STORED}`),
  },
  {
    name: 'verbosity',
    type: 'string (`low`, `medium`, `high`)',
    invalid: (value) =>
      typeof value === 'string' && VERBOSITY_WORDS.has(value) ? undefined : `must be one of ${VERBOSITIES.join(', ')}`,
  },
  refusedEverywhere('web_search_options', 'object', 'web search', 'no family searches the web for the client'),
  { name: 'faithful', type: 'boolean (gateway extension)' },
];

/** The rows without a shared fate are exactly the fields every family declares (checked once, at load). */
function checkPerFamilyRows(): void {
  const perFamily = CHAT_PARAMETERS.filter((entry) => !entry.everywhere).map((entry) => entry.name);
  const declared: readonly string[] = PER_FAMILY_FIELDS;
  const missing = declared.filter((name) => !perFamily.includes(name));
  const undeclared = perFamily.filter((name) => !declared.includes(name));
  if (missing.length > 0 || undeclared.length > 0) {
    throw new Error(
      'the chat parameter table and PER_FAMILY_FIELDS (core/parameter-fate.ts) disagree: ' +
        [
          ...missing.map((name) => `${name} is per family but has a shared fate or no row`),
          ...undeclared.map((name) => `${name} has no shared fate and is not per family`),
        ].join('; '),
    );
  }
}
checkPerFamilyRows();

// ── Derived views ─────────────────────────────────────────────────────────────────────

/** The entries the parser must look at (a rule, a refusal or a value to read), by field name. */
export const CHECKED_PARAMETERS: ReadonlyMap<string, ChatParameter> = new Map(
  CHAT_PARAMETERS.filter((entry) => entry.invalid ?? entry.unsupported ?? entry.key).map((entry) => [
    entry.name,
    entry,
  ]),
);

/** The table as one family reads it: built the first time the family is asked about, then kept. */
export interface FamilyParameterFates {
  /** Every field's fate on this family, by field name. */
  readonly fates: ReadonlyMap<string, Fate>;
  /** The chat layer cuts the answer at `stop` itself (the upstream cannot stop). */
  readonly enforcesStop: boolean;
  /** The chat layer holds the answer to `response_format` itself (json-answer.ts). */
  readonly enforcesJson: boolean;
  /** The chat layer holds the answer to a `tool_choice` that asks for a call itself (tool-choice-rule.ts). */
  readonly enforcesToolChoice: boolean;
  /** The chat layer checks the calls of a `strict: true` tool against its schema itself (strict-tools.ts). */
  readonly enforcesStrictTools: boolean;
  /** Only the values this family honours upstream; the same object when nothing is dropped. */
  upstream(values: ChatParameterValues): ChatParameterValues;
}

const READ = new Map<ProviderId, FamilyParameterFates>();

/** One Map lookup per turn; the first read of a family checks its declaration and throws naming what is wrong. */
export function parameterFatesOf(provider: ProviderId): FamilyParameterFates {
  let fates = READ.get(provider);
  if (!fates) {
    fates = readFamilyParameters(familyOf(provider));
    READ.set(provider, fates);
  }
  return fates;
}

/** A family's fates with the shared ones; throws naming every field it forgot or may not declare. */
export function readFamilyParameters(family: Family): FamilyParameterFates {
  const declared: Readonly<Record<string, Fate | undefined>> = family.parameters;
  const problems: string[] = [];
  for (const name of Object.keys(declared)) {
    if (!(PER_FAMILY_FIELDS as readonly string[]).includes(name))
      problems.push(`"${name}" is not a per-family field (its fate is the shared table's)`);
  }
  const fates = new Map<string, Fate>();
  for (const entry of CHAT_PARAMETERS) {
    const fate = entry.everywhere ?? declared[entry.name];
    if (fate === undefined) problems.push(`no fate for "${entry.name}"`);
    else if (!FATE_KINDS.includes(fate.fate) || typeof fate.note !== 'string' || fate.note === '')
      problems.push(`"${entry.name}" needs a fate (${FATE_KINDS.join(', ')}) and a note`);
    else fates.set(entry.name, fate);
  }
  if (problems.length > 0)
    throw new Error(
      `family "${family.id}" declares its request-field fates wrongly (Family.parameters): ${problems.join('; ')}`,
    );
  const honouredKeys = new Set(
    CHAT_PARAMETERS.filter((entry) => entry.key && fates.get(entry.name)!.fate === 'honoured').map(
      (entry) => entry.key!,
    ),
  );
  return {
    fates,
    enforcesStop: fates.get('stop')!.fate === 'enforced',
    enforcesJson: fates.get('response_format')!.fate === 'enforced',
    enforcesToolChoice: fates.get('tool_choice')!.fate === 'enforced',
    enforcesStrictTools: family.strictToolsUpstream !== true,
    upstream(values) {
      let kept: Record<string, unknown> | undefined;
      for (const key in values) {
        if (honouredKeys.has(key as ParameterKey)) continue;
        kept ??= { ...values };
        delete kept[key];
      }
      return (kept as ChatParameterValues | undefined) ?? values;
    },
  };
}

export function fateOf(provider: ProviderId, name: string): Fate | undefined {
  return parameterFatesOf(provider).fates.get(name);
}

/** Only the values this family honours upstream; the same object when nothing is dropped. */
export function upstreamParameters(provider: ProviderId, values: ChatParameterValues): ChatParameterValues {
  return parameterFatesOf(provider).upstream(values);
}
