import { isJsonObject } from '../common/json';

/*
 * The field and message rules of a chat body: what makes a body a 400 before anything reads it.
 */

// Hand-written on purpose, instead of the class-validator DTO the stack names: plainToInstance +
// validate copied and walked every message of every request (a third of the CPU of a 1 MiB agent
// history, docs/performance.md) and recursed on hostile nesting. The rules are a flat table; the
// class-validator DTO is kept as a test oracle (test/support/chat-request-class-validator.oracle.ts) and a
// property test proves both reject the same bodies with the same messages.

/** Messages a rejected body reports, joined with `; ` (the first ones only). */
export const MAX_REPORTED_ERRORS = 5;

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);
const NESTED_NOT_OBJECT = 'nested property messages must be either object or array';

type Predicate = (value: unknown) => boolean;
const isString: Predicate = (value) => typeof value === 'string';
const isBoolean: Predicate = (value) => typeof value === 'boolean';
const isArrayOfObjects: Predicate = (value) => Array.isArray(value) && value.every(isJsonObject);

/** Which values of a field are not checked at all: absent and `null`, only absent, or none. */
type Skip = 'missing-or-null' | 'missing' | 'never';

/** One checked field. Messages name the field and the rule, never the value. */
interface FieldRule {
  readonly field: string;
  readonly skip: Skip;
  readonly valid: Predicate;
  readonly message: string;
}

const rule = (field: string, skip: Skip, valid: Predicate, message: string): FieldRule => ({
  field,
  skip,
  valid,
  message,
});

/** Top-level fields after `messages`, in the order their errors are reported. */
const BODY_RULES: readonly FieldRule[] = [
  rule('stream', 'missing-or-null', isBoolean, 'must be a boolean value'),
  rule('stream_options', 'missing-or-null', isJsonObject, 'must be an object'),
  rule('tools', 'missing-or-null', isArrayOfObjects, 'must be an array of objects'),
  rule(
    'tool_choice',
    'missing',
    (value) => typeof value === 'string' || isJsonObject(value),
    'must be "auto", "none", "required" or an object naming a tool',
  ),
  rule('parallel_tool_calls', 'missing-or-null', isBoolean, 'must be a boolean value'),
  rule('faithful', 'missing-or-null', isBoolean, 'must be a boolean value'),
  rule('reasoning_effort', 'missing-or-null', isString, 'must be a string'),
  rule('verbosity', 'missing-or-null', isString, 'must be a string'),
];

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
    (value) =>
      value === null ||
      typeof value === 'string' ||
      (Array.isArray(value) && value.every((part) => typeof part === 'object' && part !== null)),
    'must be a string, an array of content parts, or null',
  ),
  rule('tool_calls', 'missing-or-null', isArrayOfObjects, 'must be an array of objects'),
  rule('tool_call_id', 'missing-or-null', isString, 'must be a string'),
];

function checkFields(
  object: Record<string, unknown>,
  rules: readonly FieldRule[],
  prefix: string,
  errors: string[],
): void {
  for (const { field, skip, valid, message } of rules) {
    if (errors.length >= MAX_REPORTED_ERRORS) return;
    const value = object[field];
    if ((value === undefined && skip !== 'never') || (value === null && skip === 'missing-or-null') || valid(value))
      continue;
    errors.push(`${prefix}${field} ${message}`);
  }
}

/**
 * The `messages` array, depth first and in order: an object is a message, an array is walked the
 * same way (`messages.0.1.role`), anything else is reported. Iterative, with its own stack, so a
 * hostile nesting of arrays cannot exhaust the call stack.
 */
function checkMessages(messages: readonly unknown[], errors: string[]): void {
  const stack: Array<{ readonly items: readonly unknown[]; readonly path: string; index: number }> = [
    { items: messages, path: 'messages', index: 0 },
  ];
  while (stack.length > 0 && errors.length < MAX_REPORTED_ERRORS) {
    const frame = stack[stack.length - 1];
    if (frame.index >= frame.items.length) {
      stack.pop();
      continue;
    }
    const index = frame.index++;
    const item = frame.items[index];
    const path = `${frame.path}.${index}`;
    if (Array.isArray(item)) stack.push({ items: item, path, index: 0 });
    else if (typeof item === 'object' && item !== null)
      checkFields(item as Record<string, unknown>, MESSAGE_RULES, `${path}.`, errors);
    else errors.push(NESTED_NOT_OBJECT);
  }
}

/**
 * What is wrong with a chat body (a JSON object), as field-and-rule messages in report order,
 * at most `MAX_REPORTED_ERRORS`; empty when it is valid. Unknown fields are never checked.
 *
 * Hand-written in place of class-transformer + class-validator, which copied and walked every
 * message of every request through reflection metadata (a third of the gateway's time on a
 * 1 MiB agent history). It rejects exactly the same bodies with exactly the same messages:
 * chat-request.parser.spec.ts checks it against the old implementation on generated bodies.
 */
export function chatBodyErrors(body: Record<string, unknown>): string[] {
  const errors: string[] = [];
  if (body.model !== undefined && body.model !== null && !isString(body.model)) errors.push('model must be a string');
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) errors.push('messages must contain at least one message');
  else checkMessages(messages, errors);
  checkFields(body, BODY_RULES, '', errors);
  return errors.slice(0, MAX_REPORTED_ERRORS);
}
