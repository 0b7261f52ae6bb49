import 'reflect-metadata';
import fc from 'fast-check';
import { classValidatorMessage } from '../../test/support/chat-request-class-validator.oracle';
import type { GatewayError } from '../core/gateway.error';
import { chatBodyErrors, parseChatBody } from './chat-request.parser';

const messageOf = (body: unknown): string | undefined => {
  try {
    parseChatBody(body, 'gpt-6.1-sol');
    return undefined;
  } catch (error) {
    return (error as GatewayError).publicMessage;
  }
};

/** Values a client could send for any field: the right types, the wrong ones, and edge cases. */
const anyValue = fc.oneof(
  fc.constantFrom(
    null,
    true,
    false,
    0,
    1.5,
    '',
    'auto',
    'user',
    'assistant',
    'tool',
    'system',
    'developer',
    'bot',
    [],
    {},
    [{}],
    [1],
    [null],
    [[]],
    { type: 'function' },
  ),
  fc.string({ maxLength: 4 }),
  fc.integer(),
  fc.jsonValue({ maxDepth: 2 }),
);
const message = fc.record(
  {
    role: fc.oneof(fc.constantFrom('system', 'developer', 'user', 'assistant', 'tool'), anyValue),
    content: anyValue,
    tool_calls: anyValue,
    tool_call_id: anyValue,
    name: anyValue,
  },
  { requiredKeys: [] },
);
/** Message lists, including arrays nested in arrays and non-objects among the messages. */
const messages = fc.letrec((tie) => ({
  list: fc.array(
    fc.oneof(
      { weight: 6, arbitrary: message },
      { weight: 1, arbitrary: anyValue },
      { weight: 1, arbitrary: tie('list') },
    ),
    { maxLength: 4 },
  ),
})).list;
const body = fc.record(
  {
    model: anyValue,
    messages: fc.oneof({ weight: 5, arbitrary: messages }, { weight: 1, arbitrary: anyValue }),
    stream: anyValue,
    stream_options: anyValue,
    tools: anyValue,
    tool_choice: anyValue,
    parallel_tool_calls: anyValue,
    faithful: anyValue,
    reasoning_effort: anyValue,
    verbosity: anyValue,
    // Fields of the parameter table (temperature, n, stop, response_format…) have rules the old
    // DTO never had (issue 22): chat-parameters.spec.ts tests them on their own.
    max_output_tokens: anyValue,
  },
  { requiredKeys: [] },
);

describe('chat body validation', () => {
  it('rejects exactly what the class-validator version rejected, with the same message', () => {
    fc.assert(
      fc.property(body, (generated) => {
        const plain = JSON.parse(JSON.stringify(generated)) as Record<string, unknown>;
        expect(messageOf(plain)).toBe(classValidatorMessage(plain));
      }),
      { numRuns: 3000 },
    );
  });

  it('names fields and rules, at most five of them, in field order', () => {
    expect(messageOf({ messages: [] })).toBe('messages must contain at least one message');
    expect(messageOf({ model: 5, messages: [{ role: 'bot', content: 5 }, 7], stream: 'yes', tool_choice: null })).toBe(
      'model must be a string; messages.0.role must be one of system, developer, user, assistant, tool; messages.0.content must be a string, an array of content parts, or null; nested property messages must be either object or array; stream must be a boolean value',
    );
    expect(
      messageOf({
        messages: [{ role: 'user', content: 'hi' }],
        temperature: 0.3,
        max_output_tokens: 'x',
        unknown_field: [],
      }),
    ).toBeUndefined();
    expect(messageOf([])).toBe('the request body must be a JSON object');
  });

  it('walks arrays nested 10,000 deep without recursing', () => {
    let nested: unknown[] = [{ role: 'user' }];
    for (let depth = 0; depth < 10_000; depth++) nested = [nested];
    expect(chatBodyErrors({ messages: nested })).toEqual([]);
    let bad: unknown[] = [1];
    for (let depth = 0; depth < 10_000; depth++) bad = [bad];
    expect(chatBodyErrors({ messages: bad })).toEqual(['nested property messages must be either object or array']);
  });
});

describe('hostile keys (issue 14 fuzz test)', () => {
  const parse = (text: string) => parseChatBody(JSON.parse(text), 'gpt-6.1-sol');
  const message = '{"role":"user","content":"hi"}';

  it('treats __proto__, constructor, prototype and method-named keys as plain data', () => {
    for (const key of ['__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString']) {
      // Anywhere in the body, including inside tool calls, none of them crashes the parser…
      expect(parse(`{"${key}":{"polluted":1},"messages":[${message}]}`).messages).toHaveLength(1);
      expect(
        parse(`{"messages":[{"role":"assistant","content":null,"tool_calls":[{"${key}":{"prototype":{}}}]}]}`).messages,
      ).toHaveLength(1);
      // …or switches validation off: the rules still apply to the real fields.
      expect(messageOf(JSON.parse(`{"${key}":{},"messages":5}`))).toMatch(/^messages /);
      expect(messageOf(JSON.parse(`{"messages":[{"${key}":{"role":"user"},"role":"nobody"}]}`))).toBe(
        'messages.0.role must be one of system, developer, user, assistant, tool',
      );
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
