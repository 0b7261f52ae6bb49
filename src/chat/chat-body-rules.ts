import { IsBoolean, IsOptional, classValidator, IsString, ValidateBy } from '../common/validation/class-validator';
import type { ValidationOptions, ValidatorOptions } from '../common/validation/class-validator';
import { isJsonObject } from '../common/json';
import { quoted } from '../core/quoted';
import { forcedToolName, IMAGE_DETAILS, imageDetailOf, isImagePart, toolSource } from '../core/chat-message';

/*
 * The field and message rules of a chat body: what makes a body a 400 before anything reads it.
 *
 * The top-level fields are a class-validator DTO. The `messages` array is one custom constraint
 * that walks it with a flat rule table instead of a nested DTO per message: class-transformer's
 * `plainToInstance` would copy every message of every request, and a 1 MiB agent history carries
 * hundreds of them, so nothing here transforms or copies a message.
 */

/** Messages a rejected body reports, joined with `; ` (the first ones only). */
export const MAX_REPORTED_ERRORS = 5;

/** What joins the messages of one body; no rule's text contains it. */
const SEPARATOR = '; ';

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);
const NO_MESSAGES = 'messages must contain at least one message';
const NOT_MESSAGE_ARRAY = 'messages must be an array of message objects';
const TOOL_CHOICE_WORDS = new Set(['auto', 'none', 'required']);
const DETAILS: ReadonlySet<string> = new Set(IMAGE_DETAILS);

type Predicate = (value: unknown) => boolean;

/** A content part: an object; a text part (typed `text`, or untyped with a `text`) carries a string. */
const isContentPart: Predicate = (part) =>
  isJsonObject(part) &&
  (part.type === 'text' || (part.type === undefined && 'text' in part) ? typeof part.text === 'string' : true);
const isString: Predicate = (value) => typeof value === 'string';
const isArrayOfObjects: Predicate = (value) => Array.isArray(value) && value.every(isJsonObject);

/** A class-validator rule from a predicate; an absent field (`undefined`) always passes it. */
function satisfies(name: string, predicate: Predicate, message: string) {
  return (options?: ValidationOptions): PropertyDecorator =>
    ValidateBy(
      {
        name,
        validator: {
          validate: (value: unknown) => value === undefined || predicate(value),
          defaultMessage: () => message,
        },
      },
      options,
    );
}

/**
 * `tool_choice`: `auto`, `none`, `required`, or a forced tool, `{"type":"function"|"custom", <type>: {"name"}}`
 * or flat `{"type", "name"}` (`null` counts as absent). Whether the tool is among `tools` is the
 * parser's check, after the tools are read.
 */
const IsToolChoice = satisfies(
  'isToolChoice',
  (value) =>
    value === null || (typeof value === 'string' ? TOOL_CHOICE_WORDS.has(value) : forcedToolName(value) !== undefined),
  '$property must be "auto", "none", "required" or an object naming a function or custom tool',
);

/**
 * `model`, when it is a string, must hold a non-space character. Only an absent or `null` model
 * means the default model: an empty string is what a client sends when its model setting is
 * empty, and serving the default for it would hide that mistake behind a model nobody chose.
 */
const IsModelId = satisfies(
  'isModelId',
  (value) => typeof value !== 'string' || /\S/.test(value),
  "$property must not be empty or blank: send a model id from GET /v1/models, or leave $property out (or null) for the gateway's default model",
);

/** `stream_options`: an object whose `include_usage` and `include_obfuscation`, when present, are booleans. */
const IsStreamOptions = satisfies(
  'isStreamOptions',
  (value) =>
    isJsonObject(value) &&
    (value.include_usage === undefined || typeof value.include_usage === 'boolean') &&
    (value.include_obfuscation === undefined || typeof value.include_obfuscation === 'boolean'),
  '$property must be an object whose include_usage and include_obfuscation are booleans',
);

/**
 * `tools`: an array of tool definitions; a function or custom tool names itself where its form
 * keeps the name (nested or flat, `toolSource`), a name no other of them has, with `parameters`,
 * when given, an object.
 */
function IsChatTools(): PropertyDecorator {
  return ValidateBy({
    name: 'isChatTools',
    validator: {
      validate: (value: unknown) => value === undefined || toolsErrors(value, 1).length === 0,
      defaultMessage: (args) => toolsErrors(args?.value, MAX_REPORTED_ERRORS).join(SEPARATOR),
    },
  });
}

/**
 * What is wrong with a `tools` value, at most `limit` messages. A function or custom tool's name is
 * taken exactly as sent (docs/chat.md, `tools`), and is unique among them: a call names its tool by
 * name alone, whatever its type, and an upstream given two tools of one name refuses the request
 * (Gemini: `Duplicate function declaration found`) or has its model call either.
 */
function toolsErrors(tools: unknown, limit: number): string[] {
  if (!Array.isArray(tools)) return ['tools must be an array of objects'];
  const errors: string[] = [];
  // Where each name is first declared: made only when there are two tools or more.
  let firstPlaces: Map<string, string> | undefined;
  for (let index = 0; index < tools.length && errors.length < limit; index++) {
    const raw: unknown = tools[index];
    if (!isJsonObject(raw)) {
      errors.push(`tools.${index} must be an object`);
      continue;
    }
    const { type, source, path } = toolSource(raw);
    // Other types (web_search…) are hosted tools, left to each family (docs/chat.md, `tools`).
    if (type !== 'function' && type !== 'custom') continue;
    const { name } = source;
    if (typeof name !== 'string' || name.trim() === '')
      errors.push(`tools.${index}${path}.name must be a non-empty string`);
    else if (tools.length > 1) {
      firstPlaces ??= new Map();
      const place = `tools.${index}${path}.name`;
      const first = firstPlaces.get(name);
      if (first === undefined) firstPlaces.set(name, place);
      else
        errors.push(
          `${place} ${quotedToolName(name)} repeats ${first}: a call names its tool by name alone, so tool names must be unique, function and custom tools alike: rename or remove one of them`,
        );
    }
    if (source.parameters !== undefined && source.parameters !== null && !isJsonObject(source.parameters))
      errors.push(`tools.${index}${path}.parameters must be an object`);
  }
  return errors.slice(0, limit);
}

/**
 * A client's tool name as a chat body's refusal quotes it (`quoted`), a `;` written as JSON's
 * `\u003b`: the rules' messages are joined and split on the separator, which must not occur
 * inside a name.
 */
const quotedToolName = (name: string) => quoted(name, 64).replaceAll(';', '\\u003b');

/**
 * `messages`: a non-empty array whose messages pass the message rules below, walked in place.
 * Its message lists every broken rule (at most `MAX_REPORTED_ERRORS`) joined by the separator.
 */
function IsChatMessages(): PropertyDecorator {
  return ValidateBy({
    name: 'isChatMessages',
    validator: {
      validate: (value: unknown) => messagesErrors(value, 1).length === 0,
      defaultMessage: (args) => messagesErrors(args?.value, MAX_REPORTED_ERRORS).join(SEPARATOR),
    },
  });
}

/**
 * The fields the gateway interprets, in the order their errors are reported. Everything else a
 * client sends (sampling fields, `max_output_tokens`, vendor extensions) is left to the parameter
 * table or ignored, never rejected here (docs/chat.md "Request").
 */
export class ChatCompletionRequestDto {
  @IsOptional()
  @IsString()
  @IsModelId()
  model?: unknown;

  @IsChatMessages()
  messages?: unknown;

  @IsOptional()
  @IsBoolean()
  stream?: unknown;

  @IsOptional()
  @IsStreamOptions()
  stream_options?: unknown;

  @IsOptional()
  @IsChatTools()
  tools?: unknown;

  @IsToolChoice()
  tool_choice?: unknown;

  @IsOptional()
  @IsBoolean()
  parallel_tool_calls?: unknown;

  @IsOptional()
  @IsBoolean()
  faithful?: unknown;

  @IsOptional()
  @IsString()
  reasoning_effort?: unknown;

  @IsOptional()
  @IsString()
  verbosity?: unknown;

  /**
   * The DTO over a body's own values: the named fields only, copied by reference (a shallow copy of
   * a dozen slots, the messages array included as is). Hostile keys such as `__proto__` are never
   * read, so they can neither change the instance's class nor switch validation off.
   */
  static of(body: Record<string, unknown>): ChatCompletionRequestDto {
    const dto = new ChatCompletionRequestDto();
    dto.model = body.model;
    dto.messages = body.messages;
    dto.stream = body.stream;
    dto.stream_options = body.stream_options;
    dto.tools = body.tools;
    dto.tool_choice = body.tool_choice;
    dto.parallel_tool_calls = body.parallel_tool_calls;
    dto.faithful = body.faithful;
    dto.reasoning_effort = body.reasoning_effort;
    dto.verbosity = body.verbosity;
    return dto;
  }
}

/** One message per broken field, and no values kept on the errors (they may hold prompts). */
const VALIDATOR_OPTIONS: ValidatorOptions = {
  stopAtFirstError: true,
  forbidUnknownValues: false,
  validationError: { target: false, value: false },
};

const validateChatBody = classValidator(ChatCompletionRequestDto, VALIDATOR_OPTIONS);

/** What is wrong with a chat body: the rules it breaks, and the first field that breaks one (the error's `param`). */
export interface ChatBodyErrors {
  readonly messages: string[];
  readonly field?: string;
}

const VALID: ChatBodyErrors = Object.freeze({ messages: [] });

/**
 * What is wrong with a chat body (a JSON object), as field-and-rule messages in report order,
 * at most `MAX_REPORTED_ERRORS`; no messages when it is valid. Unknown fields are never checked.
 */
export function chatBodyErrors(body: Record<string, unknown>): ChatBodyErrors {
  const failures = validateChatBody(ChatCompletionRequestDto.of(body));
  if (failures.length === 0) return VALID;
  const messages: string[] = [];
  for (const failure of failures)
    for (const message of Object.values(failure.constraints ?? {})) messages.push(...message.split(SEPARATOR));
  return { messages: messages.slice(0, MAX_REPORTED_ERRORS), field: failures[0].property };
}

/** Which values of a message field are not checked at all: absent and `null`, only absent, or none. */
type Skip = 'missing-or-null' | 'missing' | 'never';

/** Reports what is wrong inside a field's value that passed its rule; `prefix` is the message's (`messages.1.`). */
type EntriesCheck = (value: unknown, prefix: string, errors: string[], limit: number) => void;

/** One checked message field. Messages name the field and the rule, never the value. */
interface FieldRule {
  readonly field: string;
  readonly skip: Skip;
  readonly valid: Predicate;
  readonly message: string;
  /** The checks of the value's entries, when it has rules of its own beyond `valid`. */
  readonly entries?: EntriesCheck;
}

const rule = (field: string, skip: Skip, valid: Predicate, message: string, entries?: EntriesCheck): FieldRule => ({
  field,
  skip,
  valid,
  message,
  entries,
});

/** The payload field of each kind of history call, and what its message says about it. */
const CALL_PAYLOADS = {
  function: { field: 'arguments', rule: 'must be a string: the arguments as JSON text (JSON.stringify the object)' },
  custom: { field: 'input', rule: "must be a string (the custom tool's raw input text)" },
} as const;

const isNonBlankString = (value: unknown) => typeof value === 'string' && value.trim() !== '';

/**
 * The entries of a `tool_calls` array (objects, by its own rule), as OpenAI takes them:
 * `{id, type:"function", function:{name, arguments}}` or `{id, type:"custom", custom:{name, input}}`,
 * a missing or null `type` meaning `function`, a missing or null payload an empty one. Every family
 * sends a call back by its name and pairs its result by its id, so a call broken here would be
 * dropped with its result, or its arguments replaced. Reads each entry in place; a message string
 * is built only for a broken one.
 */
function checkToolCalls(value: unknown, prefix: string, errors: string[], limit: number): void {
  const calls = value as readonly Record<string, unknown>[];
  for (let index = 0; index < calls.length && errors.length < limit; index++) {
    const call = calls[index];
    if (typeof call.id !== 'string' || call.id === '')
      errors.push(
        `${prefix}tool_calls.${index}.id must be a non-empty string (the id its tool message names as tool_call_id)`,
      );
    const type = call.type ?? 'function';
    if (type !== 'function' && type !== 'custom') {
      errors.push(`${prefix}tool_calls.${index}.type must be "function" or "custom" (the calls a client tool makes)`);
      continue;
    }
    const body = call[type];
    if (!isJsonObject(body)) {
      errors.push(
        `${prefix}tool_calls.${index}.${type} must be an object with the called tool's name (the form of a "${type}" call)`,
      );
      continue;
    }
    if (!isNonBlankString(body.name))
      errors.push(`${prefix}tool_calls.${index}.${type}.name must be a non-empty string`);
    const payload = CALL_PAYLOADS[type];
    const sent = body[payload.field];
    if (sent !== undefined && sent !== null && typeof sent !== 'string')
      errors.push(`${prefix}tool_calls.${index}.${type}.${payload.field} ${payload.rule}`);
  }
}

/**
 * The image parts of a content array (objects, by its own rule): an image's `detail` is one
 * OpenAI defines, or absent or null (the upstream's default), on every family alike: one family
 * sends it on, where its backend refuses any other, another's upstream has no such field.
 */
function checkContentParts(value: unknown, prefix: string, errors: string[], limit: number): void {
  if (!Array.isArray(value)) return;
  for (let index = 0; index < value.length && errors.length < limit; index++) {
    const part = value[index] as Record<string, unknown>;
    if (!isImagePart(part)) continue;
    const detail = imageDetailOf(part);
    if (detail.value === undefined || detail.value === null) continue;
    if (typeof detail.value !== 'string' || !DETAILS.has(detail.value))
      errors.push(`${prefix}content.${index}.${detail.field} must be one of ${IMAGE_DETAILS.join(', ')}, or left out`);
  }
}

/** Fields of one message, in report order (docs/chat.md "Request"). */
const MESSAGE_RULES: readonly FieldRule[] = [
  rule(
    'role',
    'never',
    (value) => typeof value === 'string' && ROLES.has(value),
    'must be one of system, developer, user, assistant, tool',
  ),
  rule(
    'content',
    'missing',
    (value) => value === null || typeof value === 'string' || (Array.isArray(value) && value.every(isContentPart)),
    'must be a string, an array of content parts (a text part with a string text), or null',
    checkContentParts,
  ),
  rule('tool_calls', 'missing-or-null', isArrayOfObjects, 'must be an array of objects', checkToolCalls),
  rule('tool_call_id', 'missing-or-null', isString, 'must be a string'),
  rule('refusal', 'missing-or-null', isString, 'must be a string'),
  // The deprecated call form: its result would come back as a `function` message, whose role is refused above.
  rule(
    'function_call',
    'missing-or-null',
    () => false,
    'is not supported (the deprecated form of tool_calls): send tool_calls',
  ),
  // An audio answer replayed by id: no family's upstream can take it back, and a message without
  // text would otherwise leave the history unnoticed.
  rule(
    'audio',
    'missing-or-null',
    () => false,
    'is not supported (no family can replay an audio answer): send its transcript as content',
  ),
];

/** What the role rule adds for the deprecated `function` role: the form that replaced it. */
const FUNCTION_ROLE =
  ' (a "function" message is the deprecated form of a tool result: send a tool message with the tool_call_id of its call)';

function checkFields(message: Record<string, unknown>, prefix: string, errors: string[], limit: number): void {
  for (const { field, skip, valid, message: text, entries } of MESSAGE_RULES) {
    if (errors.length >= limit) return;
    const value = message[field];
    if ((value === undefined && skip !== 'never') || (value === null && skip === 'missing-or-null')) continue;
    if (!valid(value))
      errors.push(`${prefix}${field} ${text}${field === 'role' && value === 'function' ? FUNCTION_ROLE : ''}`);
    else if (entries) entries(value, prefix, errors, limit);
  }
  // Only the model makes calls: every family reads them from assistant messages alone, so calls
  // on any other message would be dropped unnoticed.
  if (
    message.role !== 'assistant' &&
    ROLES.has(message.role as string) &&
    Array.isArray(message.tool_calls) &&
    message.tool_calls.length > 0 &&
    errors.length < limit
  )
    errors.push(
      `${prefix}tool_calls is taken only on an assistant message (the calls the model made): move the calls to the assistant message that made them, or leave tool_calls out`,
    );
  // A result names the call it answers, as OpenAI requires: without the id no family can pair it.
  if (message.role === 'tool' && errors.length < limit && (message.tool_call_id ?? '') === '')
    errors.push(`${prefix}tool_call_id is required on a tool message (the id of the call it answers)`);
}

/**
 * What is wrong with a `messages` value, at most `limit` messages: absent or empty, not an array
 * (a string, one message object, null), or else its items in order, each a message object (an array among them is refused too: no family could
 * read one, so it would be dropped).
 */
function messagesErrors(messages: unknown, limit: number): string[] {
  if (messages === undefined || (Array.isArray(messages) && messages.length === 0)) return [NO_MESSAGES];
  if (!Array.isArray(messages)) return [NOT_MESSAGE_ARRAY];
  const errors: string[] = [];
  for (let index = 0; index < messages.length && errors.length < limit; index++) {
    const item: unknown = messages[index];
    if (isJsonObject(item)) checkFields(item, `messages.${index}.`, errors, limit);
    else errors.push(`messages.${index} must be a message object`);
  }
  return errors;
}
