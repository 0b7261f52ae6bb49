import 'reflect-metadata';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import fc from 'fast-check';
import * as fs from 'node:fs';
import type {
  ChatCompletionContentPartImage,
  ChatCompletionCreateParamsBase,
} from 'openai/resources/chat/completions/completions';
import { IMAGE_DETAILS } from '../core/chat-message';
import type { GatewayError } from '../core/gateway.error';
import { familyIds, familyOf, registerFamily } from '../core/family-registry';
import { honoured, ignored, PER_FAMILY_FIELDS } from '../core/parameter-fate';
import { chatBodyErrors } from './chat-body-rules';
import {
  CHAT_PARAMETERS,
  fateOf,
  parameterFatesOf,
  readFamilyParameters,
  SERVICE_TIERS,
  upstreamParameters,
} from './chat-parameters';
import { parseChatBody } from './chat-request.parser';
import { normalizeTools } from './chat-tools';

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
/** History tool calls: either kind, each field right, wrong or missing. */
const toolCall = fc.record(
  {
    id: fc.oneof(fc.constantFrom('call_1', ''), anyValue),
    type: fc.oneof(fc.constantFrom('function', 'custom'), anyValue),
    function: fc.oneof(
      fc.record({ name: fc.oneof(fc.constant('read'), anyValue), arguments: anyValue }, { requiredKeys: [] }),
      anyValue,
    ),
    custom: fc.oneof(
      fc.record({ name: fc.oneof(fc.constant('patch'), anyValue), input: anyValue }, { requiredKeys: [] }),
      anyValue,
    ),
  },
  { requiredKeys: [] },
);
/** Content parts: texts, images in either spelling with any detail, and anything else. */
const contentPart = fc.oneof(
  fc.record({ type: fc.constant('text'), text: anyValue }, { requiredKeys: [] }),
  fc.record(
    {
      type: fc.constant('image_url'),
      image_url: fc.oneof(fc.record({ url: anyValue, detail: anyValue }, { requiredKeys: [] }), anyValue),
    },
    { requiredKeys: [] },
  ),
  fc.record({ type: fc.constant('input_image'), image_url: anyValue, detail: anyValue }, { requiredKeys: [] }),
  anyValue,
);
const message = fc.record(
  {
    role: fc.oneof(fc.constantFrom('system', 'developer', 'user', 'assistant', 'tool', 'function'), anyValue),
    content: fc.oneof(anyValue, fc.array(contentPart, { maxLength: 3 })),
    tool_calls: fc.oneof(fc.array(toolCall, { maxLength: 3 }), anyValue),
    tool_call_id: anyValue,
    name: anyValue,
    audio: anyValue,
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
/** Flat function and custom tools under a few names, some alike but for white space, one with the separator in it. */
const TOOL_NAMES = ['read', ' read', 'patch', 'a; b'];
const tool = fc.record({ type: fc.constantFrom('function', 'custom'), name: fc.constantFrom(...TOOL_NAMES) });
const toolChoice = fc.record({ type: fc.constantFrom('function', 'custom'), name: fc.constantFrom(...TOOL_NAMES) });
const body = fc.record(
  {
    model: anyValue,
    messages: fc.oneof({ weight: 5, arbitrary: messages }, { weight: 1, arbitrary: anyValue }),
    stream: anyValue,
    stream_options: anyValue,
    tools: fc.oneof(anyValue, fc.array(tool, { maxLength: 3 })),
    tool_choice: fc.oneof(anyValue, toolChoice),
    parallel_tool_calls: anyValue,
    faithful: anyValue,
    reasoning_effort: anyValue,
    verbosity: anyValue,
    // Not a checked field: ignored, whatever its value. The parameter table's own fields
    // (temperature, n, stop, response_format…) are covered by the parameter-table tests below.
    max_output_tokens: anyValue,
  },
  { requiredKeys: [] },
);

/** A tool name as a message quotes it: a JSON string without the separator. */
const QUOTED_NAME = '"(?:[^"\\\\;]|\\\\.)*"';

/**
 * Every message a body rule reports: a field path and its rule, nothing the client sent but the
 * tool name a rule is about.
 */
const RULE_MESSAGE = new RegExp(
  '^(?:' +
    [
      'model must be a string',
      "model must not be empty or blank: send a model id from GET /v1/models, or leave model out \\(or null\\) for the gateway's default model",
      'messages must contain at least one message',
      'messages must be an array of message objects',
      'messages(?:\\.\\d+)+\\.role must be one of system, developer, user, assistant, tool(?: \\(a "function" message is the deprecated form of a tool result: send a tool message with the tool_call_id of its call\\))?',
      'messages\\.\\d+\\.content\\.\\d+\\.(?:image_url\\.)?detail must be one of auto, low, high, original, or left out',
      'messages(?:\\.\\d+)+\\.content must be a string, an array of content parts \\(a text part with a string text\\), or null',
      'messages(?:\\.\\d+)+\\.tool_calls must be an array of objects',
      'messages\\.\\d+\\.tool_calls\\.\\d+\\.id must be a non-empty string \\(the id its tool message names as tool_call_id\\)',
      'messages\\.\\d+\\.tool_calls\\.\\d+\\.type must be "function" or "custom" \\(the calls a client tool makes\\)',
      'messages\\.\\d+\\.tool_calls\\.\\d+\\.(function|custom) must be an object with the called tool\'s name \\(the form of a "\\1" call\\)',
      'messages\\.\\d+\\.tool_calls\\.\\d+\\.(?:function|custom)\\.name must be a non-empty string',
      'messages\\.\\d+\\.tool_calls\\.\\d+\\.function\\.arguments must be a string: the arguments as JSON text \\(JSON\\.stringify the object\\)',
      "messages\\.\\d+\\.tool_calls\\.\\d+\\.custom\\.input must be a string \\(the custom tool's raw input text\\)",
      'messages(?:\\.\\d+)+\\.(?:tool_call_id|refusal) must be a string',
      'messages\\.\\d+\\.tool_call_id is required on a tool message \\(the id of the call it answers\\)',
      'messages\\.\\d+\\.tool_calls is taken only on an assistant message \\(the calls the model made\\): move the calls to the assistant message that made them, or leave tool_calls out',
      'messages(?:\\.\\d+)+\\.function_call is not supported \\(the deprecated form of tool_calls\\): send tool_calls',
      'messages(?:\\.\\d+)+\\.audio is not supported \\(no family can replay an audio answer\\): send its transcript as content',
      'messages\\.\\d+ must be a message object',
      '(?:stream|parallel_tool_calls|faithful) must be a boolean value',
      'stream_options must be an object whose include_usage and include_obfuscation are booleans',
      'tools must be an array of objects',
      'tools\\.\\d+ must be an object',
      'tools\\.\\d+(?:\\.function|\\.custom)?\\.(?:name must be a non-empty string|parameters must be an object)',
      `tools\\.\\d+(?:\\.function|\\.custom)?\\.name ${QUOTED_NAME} repeats tools\\.\\d+(?:\\.function|\\.custom)?\\.name: a call names its tool by name alone, so tool names must be unique, function and custom tools alike: rename or remove one of them`,
      'tool_choice must be "auto", "none", "required" or an object naming a function or custom tool',
      'tool_choice asks for a tool call, but the request has no tools',
      'tool_choice names a tool that is not in tools',
      '(?:reasoning_effort|verbosity) must be a string',
      'verbosity must be one of low, medium, high',
    ].join('|') +
    ')$',
);

/** A body of one user message and `fields`, parsed for a served model. */
const parseWith = (fields: Record<string, unknown>) =>
  parseChatBody({ messages: [{ role: 'user', content: 'hi' }], ...fields }, 'gpt-6.1-sol');

describe('chat body validation', () => {
  it('answers any body with at most five field-and-rule messages, and never with a value but a tool name', () => {
    fc.assert(
      fc.property(body, (generated) => {
        const plain = JSON.parse(JSON.stringify(generated)) as Record<string, unknown>;
        const message = messageOf(plain);
        if (message === undefined) return;
        const parts = message.split('; ');
        expect(parts.length).toBeLessThanOrEqual(5);
        for (const part of parts) expect(part).toMatch(RULE_MESSAGE);
      }),
      { numRuns: 3000 },
    );
  });

  it('refuses calls on any message but an assistant one, the function role with its replacement, and an image detail OpenAI does not define', () => {
    const call = { id: 'c1', type: 'function', function: { name: 'read', arguments: '{}' } };
    for (const role of ['system', 'developer', 'user', 'tool'])
      expect(messageOf({ messages: [{ role, content: 'x', tool_call_id: 'c1', tool_calls: [call] }] })).toBe(
        'messages.0.tool_calls is taken only on an assistant message (the calls the model made): move the calls to the assistant message that made them, or leave tool_calls out',
      );
    // An empty list or null carries no call to drop.
    expect(messageOf({ messages: [{ role: 'user', content: 'x', tool_calls: [] }] })).toBeUndefined();
    expect(messageOf({ messages: [{ role: 'user', content: 'x', tool_calls: null }] })).toBeUndefined();
    expect(messageOf({ messages: [{ role: 'function', name: 'read', content: 'x' }] })).toBe(
      'messages.0.role must be one of system, developer, user, assistant, tool (a "function" message is the deprecated form of a tool result: send a tool message with the tool_call_id of its call)',
    );
    const withImage = (part: Record<string, unknown>) =>
      messageOf({ messages: [{ role: 'user', content: [{ type: 'text', text: 'look' }, part] }] });
    for (const detail of [...IMAGE_DETAILS, null, undefined]) {
      expect(withImage({ type: 'image_url', image_url: { url: 'https://a.test/x.png', detail } })).toBeUndefined();
      expect(withImage({ type: 'input_image', image_url: 'https://a.test/x.png', detail })).toBeUndefined();
    }
    for (const detail of ['ultra', 'HIGH', 5, {}]) {
      expect(withImage({ type: 'image_url', image_url: { url: 'https://a.test/x.png', detail } })).toBe(
        'messages.0.content.1.image_url.detail must be one of auto, low, high, original, or left out',
      );
      expect(withImage({ type: 'input_image', image_url: 'https://a.test/x.png', detail })).toBe(
        'messages.0.content.1.detail must be one of auto, low, high, original, or left out',
      );
    }
  });

  it('names fields and rules, at most five of them, in field order', () => {
    expect(messageOf({ messages: [] })).toBe('messages must contain at least one message');
    expect(messageOf({ model: 'gpt-6.1-sol' })).toBe('messages must contain at least one message');
    expect(messageOf({ model: 5, messages: [{ role: 'bot', content: 5 }, 7], stream: 'yes', tool_choice: null })).toBe(
      'model must be a string; messages.0.role must be one of system, developer, user, assistant, tool; messages.0.content must be a string, an array of content parts (a text part with a string text), or null; messages.1 must be a message object; stream must be a boolean value',
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

  it.each<[Record<string, unknown>, string]>([
    [{ verbosity: 5 }, 'verbosity must be a string'],
    [{ reasoning_effort: 5 }, 'reasoning_effort must be a string'],
    [{ faithful: 'yes' }, 'faithful must be a boolean value'],
    ...['on', 5, [], { include_usage: 'yes' }, { include_obfuscation: 'yes' }].map(
      (options): [Record<string, unknown>, string] => [
        { stream_options: options },
        'stream_options must be an object whose include_usage and include_obfuscation are booleans',
      ],
    ),
  ])('refuses the top-level field of %j with its rule', (fields, expected) => {
    expect(messageOf({ messages: [{ role: 'user', content: 'hi' }], ...fields })).toBe(expected);
  });

  it('takes null for stream_options, and its flags as booleans', () => {
    expect(parseWith({ stream: true, stream_options: null }).includeUsage).toBe(false);
    expect(
      parseWith({ stream: true, stream_options: { include_usage: true, include_obfuscation: false } }).includeUsage,
    ).toBe(true);
  });

  const ROLE_RULE = 'messages.0.role must be one of system, developer, user, assistant, tool';
  const CONTENT_RULE =
    'messages.0.content must be a string, an array of content parts (a text part with a string text), or null';
  const TOOL_CALL_ID_REQUIRED = 'messages.0.tool_call_id is required on a tool message (the id of the call it answers)';
  it.each([
    [{ content: 'hi' }, ROLE_RULE],
    [{ role: null, content: 'hi' }, ROLE_RULE],
    // An invalid role is the one error: no second one about where calls may be.
    [
      { role: 'bot', content: 'hi', tool_calls: [{ id: 'c1', function: { name: 'read', arguments: '{}' } }] },
      ROLE_RULE,
    ],
    [{ role: 'user', content: [{ text: 5 }] }, CONTENT_RULE],
    [{ role: 'user', content: [{ type: 'text', text: 'a' }, 5] }, CONTENT_RULE],
    [{ role: 'tool', content: 'x', tool_call_id: 5 }, 'messages.0.tool_call_id must be a string'],
    [{ role: 'tool', content: 'x', tool_call_id: '' }, TOOL_CALL_ID_REQUIRED],
    [{ role: 'tool', content: 'x', tool_call_id: null }, TOOL_CALL_ID_REQUIRED],
    [{ role: 'tool', content: 'x' }, TOOL_CALL_ID_REQUIRED],
  ])('refuses the message %j with its rule', (message, expected) => {
    expect(messageOf({ messages: [message] })).toBe(expected);
  });

  it.each([
    { role: 'user', content: [{ text: 'untyped text part' }] },
    { role: 'assistant', content: 'hi', function_call: null },
    { role: 'tool', content: 'x', tool_call_id: 'c1' },
  ])('takes the message %j', (message) => {
    expect(messageOf({ messages: [message] })).toBeUndefined();
  });

  it('refuses an array among the messages, however deep, without walking into it', () => {
    let nested: unknown[] = [{ role: 'user', content: 'What is 2+2?' }];
    for (let depth = 0; depth < 10_000; depth++) nested = [nested];
    expect(chatBodyErrors({ messages: nested })).toEqual({
      messages: ['messages.0 must be a message object'],
      field: 'messages',
    });
    expect(chatBodyErrors({ messages: [{ role: 'user', content: 'hi' }] })).toEqual({ messages: [] });
  });

  it("carries an assistant message's refusal as its content when it has no text, and refuses the deprecated function_call and a replayed audio answer", () => {
    const refused = { role: 'assistant', content: null, refusal: 'I cannot help with that.' };
    const answered = { role: 'assistant', content: 'Here it is.', refusal: 'ignored' };
    const history = [{ role: 'user', content: 'help' }, refused, answered, { role: 'user', content: 'why?' }];
    const parsed = parseChatBody({ messages: history }, 'gpt-6.1-sol');
    expect(parsed.messages[1]).toEqual({ ...refused, content: 'I cannot help with that.' });
    expect(parsed.messages[2]).toBe(answered);
    expect(history[1].content).toBeNull();
    const plain = [{ role: 'user', content: 'hi' }];
    expect(parseChatBody({ messages: plain }, 'gpt-6.1-sol').messages).toBe(plain);
    const parted = {
      role: 'assistant',
      content: [
        { type: 'refusal', refusal: 'No.' },
        { type: 'text', text: 'Sorry.' },
      ],
    };
    expect(parseChatBody({ messages: [parted] }, 'gpt-6.1-sol').messages[0]).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'No.' },
        { type: 'text', text: 'Sorry.' },
      ],
    });
    expect(parted.content[0]).toEqual({ type: 'refusal', refusal: 'No.' });
    expect(
      messageOf({ messages: [{ role: 'assistant', content: null, function_call: { name: 'f', arguments: '{}' } }] }),
    ).toBe('messages.0.function_call is not supported (the deprecated form of tool_calls): send tool_calls');
    expect(messageOf({ messages: [{ role: 'assistant', content: null, audio: { id: 'audio_1' } }] })).toBe(
      'messages.0.audio is not supported (no family can replay an audio answer): send its transcript as content',
    );
    expect(messageOf({ messages: [{ role: 'assistant', content: 'hi', audio: null }] })).toBeUndefined();
    expect(messageOf({ messages: [{ role: 'assistant', content: null, refusal: 5 }] })).toBe(
      'messages.0.refusal must be a string',
    );
    expect(messageOf({ messages: [{ role: 'user', content: [{ type: 'text', text: 1 }] }] })).toBe(
      'messages.0.content must be a string, an array of content parts (a text part with a string text), or null',
    );
  });

  it("rewrites every assistant message's refusal, and only an assistant's string refusal", () => {
    const messagesOf = (history: unknown[]) => parseChatBody({ messages: history }, 'gpt-6.1-sol').messages;
    // Every refusal in a history is carried, not only the last one.
    expect(
      messagesOf([
        { role: 'user', content: 'a' },
        { role: 'assistant', content: null, refusal: 'No.' },
        { role: 'user', content: 'b' },
        { role: 'assistant', content: [{ type: 'refusal', refusal: 'Still no.' }] },
      ]),
    ).toEqual([
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'No.', refusal: 'No.' },
      { role: 'user', content: 'b' },
      { role: 'assistant', content: [{ type: 'text', text: 'Still no.' }] },
    ]);
    // Empty text is no text: the refusal is what the assistant said.
    expect(messagesOf([{ role: 'assistant', content: '', refusal: 'No.' }])).toEqual([
      { role: 'assistant', content: 'No.', refusal: 'No.' },
    ]);
    // A part whose refusal is not a string, and a refusal on any other role, are passed on untouched.
    const untouched = [
      { role: 'user', content: [{ type: 'refusal', refusal: 'No.' }] },
      { role: 'assistant', content: [{ type: 'refusal', refusal: 5 }] },
    ];
    expect(messagesOf(untouched)).toBe(untouched);
  });

  it('refuses a history tool call no family could send back as it is, naming the field and the fix', () => {
    const history = (...calls: unknown[]) => ({
      messages: [
        { role: 'user', content: 'read a.txt' },
        { role: 'assistant', content: null, tool_calls: calls },
        { role: 'tool', tool_call_id: 'call_1', content: 'contents of a.txt' },
      ],
    });
    const read = { id: 'call_1', type: 'function', function: { name: 'read', arguments: '{"path":"a.txt"}' } };
    const patch = { id: 'call_2', type: 'custom', custom: { name: 'patch', input: '*** Begin Patch' } };
    // Both kinds of call, a missing or null type (function), and a missing or null payload are what clients send.
    for (const accepted of [
      history(read, patch),
      history({ id: 'call_1', function: { name: 'read', arguments: '' } }),
      history({ id: 'call_1', type: null, function: { name: 'read' } }),
      history({ id: 'call_1', type: 'function', function: { name: 'read', arguments: null } }),
      history({ id: 'call_1', type: 'custom', custom: { name: 'patch' } }),
      history(),
    ])
      expect(messageOf(accepted)).toBeUndefined();
    const refused: [unknown, string][] = [
      [
        { ...read, function: { name: 'read', arguments: { path: 'a.txt' } } },
        'function.arguments must be a string: the arguments as JSON text (JSON.stringify the object)',
      ],
      [
        { ...read, function: { name: 'read', arguments: 7 } },
        'function.arguments must be a string: the arguments as JSON text (JSON.stringify the object)',
      ],
      [
        { ...read, function: null },
        'function must be an object with the called tool\'s name (the form of a "function" call)',
      ],
      [{ ...read, function: { arguments: '{}' } }, 'function.name must be a non-empty string'],
      [{ ...read, function: { name: ' ', arguments: '{}' } }, 'function.name must be a non-empty string'],
      [{ ...read, id: '' }, 'id must be a non-empty string (the id its tool message names as tool_call_id)'],
      [{ ...read, id: 1 }, 'id must be a non-empty string (the id its tool message names as tool_call_id)'],
      [{ ...read, type: 'web_search' }, 'type must be "function" or "custom" (the calls a client tool makes)'],
      [
        { ...patch, custom: undefined, function: { name: 'patch', arguments: 'x' } },
        'custom must be an object with the called tool\'s name (the form of a "custom" call)',
      ],
      [{ ...patch, custom: { input: 'x' } }, 'custom.name must be a non-empty string'],
      [
        { ...patch, custom: { name: 'patch', input: ['x'] } },
        "custom.input must be a string (the custom tool's raw input text)",
      ],
    ];
    for (const [call, rule] of refused) {
      expect(messageOf(history(patch, call))).toBe(`messages.1.tool_calls.1.${rule}`);
      expect(chatBodyErrors(history(call)).field).toBe('messages');
    }
    // Every broken field of a call is named, and the calls after it are still read.
    expect(
      chatBodyErrors(history({ type: 'function', function: { arguments: 1 } }, { ...read, id: '' })).messages,
    ).toEqual([
      'messages.1.tool_calls.0.id must be a non-empty string (the id its tool message names as tool_call_id)',
      'messages.1.tool_calls.0.function.name must be a non-empty string',
      'messages.1.tool_calls.0.function.arguments must be a string: the arguments as JSON text (JSON.stringify the object)',
      'messages.1.tool_calls.1.id must be a non-empty string (the id its tool message names as tool_call_id)',
    ]);
    expect(messageOf(history(7))).toBe('messages.1.tool_calls must be an array of objects');
  });

  it("names the field a body's first broken rule is about as the error's param", () => {
    const paramOf = (fields: Record<string, unknown>) => {
      try {
        parseWith(fields);
      } catch (error) {
        return [(error as GatewayError).code, (error as GatewayError).param];
      }
      return undefined;
    };
    expect(paramOf({ stream: 'yes' })).toEqual(['invalid_request', 'stream']);
    // Two broken fields: the first in report order is the param.
    expect(paramOf({ stream: 'yes', verbosity: 5 })).toEqual(['invalid_request', 'stream']);
    expect(paramOf({ parallel_tool_calls: 'no' })).toEqual(['invalid_request', 'parallel_tool_calls']);
    expect(paramOf({ tools: {} })).toEqual(['invalid_request', 'tools']);
    expect(paramOf({ verbosity: 5 })).toEqual(['invalid_request', 'verbosity']);
    expect(paramOf({ verbosity: 'loud' })).toEqual(['invalid_request', 'verbosity']);
    expect(paramOf({ verbosity: 'high' })).toBeUndefined();
    expect(paramOf({ stream_options: { include_usage: 'yes' } })).toEqual(['invalid_request', 'stream_options']);
    expect(paramOf({ messages: [[{ role: 'user', content: 'hi' }]] })).toEqual(['invalid_request', 'messages']);
    for (const [field, value] of Object.entries({
      store: 'yes',
      user: 5,
      metadata: 'x',
      service_tier: 5,
      prediction: 5,
      safety_identifier: 1,
      prompt_cache_key: 2,
    }))
      expect(paramOf({ [field]: value })).toEqual(['invalid_request', field]);
    expect(paramOf({ tool_choice: null, user: 'alice', store: false })).toBeUndefined();
  });

  it('refuses a function or custom tool without a name or with parameters that are not an object, and a tool_choice no tool can obey', () => {
    const read = { type: 'function', function: { name: 'read', parameters: { type: 'object' } } };
    const messageOfTools = (fields: Record<string, unknown>) =>
      messageOf({ messages: [{ role: 'user', content: 'hi' }], ...fields });
    expect(messageOfTools({ tools: [{ type: 'function', function: { description: 'd' } }] })).toBe(
      'tools.0.function.name must be a non-empty string',
    );
    expect(messageOfTools({ tools: [read, { type: 'custom', name: ' ' }] })).toBe(
      'tools.1.name must be a non-empty string',
    );
    expect(messageOfTools({ tools: [{ type: 'function', function: { name: 'f', parameters: 'x' } }] })).toBe(
      'tools.0.function.parameters must be an object',
    );
    expect(messageOfTools({ tools: [{ type: 'function', function: { name: 'f', parameters: [] } }] })).toBe(
      'tools.0.function.parameters must be an object',
    );
    // A null schema is as good as none.
    expect(
      messageOfTools({ tools: [{ type: 'function', function: { name: 'f', parameters: null } }] }),
    ).toBeUndefined();
    expect(messageOfTools({ tools: [read, 7] })).toBe('tools.1 must be an object');
    // A hosted tool is provider_a's backend's to judge.
    expect(messageOfTools({ tools: [read, { type: 'web_search' }] })).toBeUndefined();
    // ...and a tool `required` can call, though it has no name.
    expect(messageOfTools({ tool_choice: 'required', tools: [{ type: 'web_search' }] })).toBeUndefined();
    expect(messageOfTools({ tool_choice: 'bogus', tools: [read] })).toBe(
      'tool_choice must be "auto", "none", "required" or an object naming a function or custom tool',
    );
    expect(messageOfTools({ tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [] } } })).toBe(
      'tool_choice must be "auto", "none", "required" or an object naming a function or custom tool',
    );
    expect(messageOfTools({ tool_choice: 'required' })).toBe(
      'tool_choice asks for a tool call, but the request has no tools',
    );
    expect(messageOfTools({ tool_choice: { type: 'function', function: { name: 'write' } }, tools: [read] })).toBe(
      'tool_choice names a tool that is not in tools',
    );
    expect(
      messageOfTools({ tool_choice: { type: 'function', function: { name: 'read' } }, tools: [read] }),
    ).toBeUndefined();
    expect(messageOfTools({ tool_choice: { type: 'function', name: 'read' }, tools: [read] })).toBeUndefined();
    expect(messageOfTools({ tool_choice: 'none' })).toBeUndefined();
    expect(messageOfTools({ tool_choice: 'auto' })).toBeUndefined();
  });

  it('takes tool names exactly as sent, each once: a repeated name is refused naming both places, a forced tool must be the declared one of its type', () => {
    const named = (name: string, type = 'function') => ({ type, [type]: { name } });
    const messageOfTools = (fields: Record<string, unknown>) =>
      messageOf({ messages: [{ role: 'user', content: 'hi' }], ...fields });
    const UNIQUE =
      'a call names its tool by name alone, so tool names must be unique, function and custom tools alike: rename or remove one of them';
    expect(messageOfTools({ tools: [named('read'), named('ls'), named('read')] })).toBe(
      `tools.2.function.name "read" repeats tools.0.function.name: ${UNIQUE}`,
    );
    expect(messageOfTools({ tools: [{ type: 'custom', name: 'patch' }, named('patch')] })).toBe(
      `tools.1.function.name "patch" repeats tools.0.name: ${UNIQUE}`,
    );
    // Every repeat is named; a `;` in a name cannot split the message.
    expect(messageOfTools({ tools: [named('a; b'), named('a; b'), named('a; b', 'custom')] })).toBe(
      [1, 2]
        .map(
          (index) =>
            `tools.${index}.${index === 1 ? 'function' : 'custom'}.name "a\\u003b b" repeats tools.0.function.name: ${UNIQUE}`,
        )
        .join('; '),
    );
    // A name as long as OpenAI allows is quoted whole.
    const long = 'read_the_file_at_the_given_path_and_return_its_contents_as_text_';
    expect(long).toHaveLength(64);
    expect(messageOfTools({ tools: [named(long), named(long)] })).toBe(
      `tools.1.function.name "${long}" repeats tools.0.function.name: ${UNIQUE}`,
    );
    // Names are exact: white space makes another name, and a hosted tool has none to repeat.
    expect(
      messageOfTools({
        tools: [named('read'), named('read '), named(' read'), { type: 'web_search' }, { type: 'web_search' }],
      }),
    ).toBeUndefined();
    expect(messageOfTools({ tools: [named('read '), named('read')] })).toBeUndefined();
    expect(messageOfTools({ tools: [named('read '), named('read ')] })).toBe(
      `tools.1.function.name "read " repeats tools.0.function.name: ${UNIQUE}`,
    );
    expect(
      messageOfTools({ tool_choice: { type: 'function', function: { name: ' read ' } }, tools: [named('read')] }),
    ).toBe('tool_choice names a tool that is not in tools');
    expect(
      messageOfTools({ tool_choice: { type: 'function', name: 'read ' }, tools: [named('read ')] }),
    ).toBeUndefined();
    // The declaration says a forced tool's type (names are unique): either type forces it.
    expect(
      messageOfTools({ tool_choice: { type: 'custom', custom: { name: 'read' } }, tools: [named('read')] }),
    ).toBeUndefined();
    expect(
      messageOfTools({ tool_choice: { type: 'function', name: 'patch' }, tools: [named('patch', 'custom')] }),
    ).toBeUndefined();
    expect(
      messageOfTools({ tool_choice: { type: 'custom', name: 'patch' }, tools: [named('patch', 'custom')] }),
    ).toBeUndefined();
  });
});

describe('hostile keys (fuzz test)', () => {
  const parse = (text: string) => parseChatBody(JSON.parse(text), 'gpt-6.1-sol');
  const message = '{"role":"user","content":"hi"}';

  it('treats __proto__, constructor, prototype and method-named keys as plain data', () => {
    for (const key of ['__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString']) {
      // Anywhere in the body, including inside tool calls, none of them crashes the parser…
      expect(parse(`{"${key}":{"polluted":1},"messages":[${message}]}`).messages).toHaveLength(1);
      expect(
        parse(
          `{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","function":{"name":"f","${key}":{}},"${key}":{"prototype":{}}}]}]}`,
        ).messages,
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

const ROOT = path.resolve(__dirname, '..', '..');

/**
 * Every field of the pinned `openai` SDK's ChatCompletionCreateParams. The `satisfies` makes the
 * compiler fail when an SDK upgrade adds a field: it then needs a row in the table.
 */
const SDK_FIELDS = {
  messages: true,
  model: true,
  audio: true,
  frequency_penalty: true,
  function_call: true,
  functions: true,
  logit_bias: true,
  logprobs: true,
  max_completion_tokens: true,
  max_tokens: true,
  metadata: true,
  modalities: true,
  moderation: true,
  n: true,
  parallel_tool_calls: true,
  prediction: true,
  presence_penalty: true,
  prompt_cache_key: true,
  prompt_cache_options: true,
  prompt_cache_retention: true,
  reasoning_effort: true,
  response_format: true,
  safety_identifier: true,
  seed: true,
  service_tier: true,
  stop: true,
  store: true,
  stream: true,
  stream_options: true,
  temperature: true,
  tool_choice: true,
  tools: true,
  top_logprobs: true,
  top_p: true,
  user: true,
  verbosity: true,
  web_search_options: true,
} satisfies Record<keyof ChatCompletionCreateParamsBase, true>;

/** The SDK's service tiers and image detail levels: the `satisfies` fails to compile when an upgrade adds or drops one. */
const SDK_SERVICE_TIERS = {
  auto: true,
  default: true,
  flex: true,
  scale: true,
  priority: true,
  fast: true,
} satisfies Record<NonNullable<ChatCompletionCreateParamsBase['service_tier']>, true>;
const SDK_IMAGE_DETAILS = {
  auto: true,
  low: true,
  high: true,
  original: true,
} satisfies Record<NonNullable<ChatCompletionContentPartImage.ImageURL['detail']>, true>;

const refusalOf = (body: Record<string, unknown>): GatewayError | undefined => {
  try {
    parseWith(body);
    return undefined;
  } catch (error) {
    return error as GatewayError;
  }
};

describe('CHAT_PARAMETERS', () => {
  it('has one row for every field the openai SDK can send, plus faithful, and no other', () => {
    expect(CHAT_PARAMETERS.map((entry) => entry.name).sort()).toEqual([...Object.keys(SDK_FIELDS), 'faithful'].sort());
  });

  it("takes exactly the SDK's service tiers and image detail levels", () => {
    expect([...SERVICE_TIERS].sort()).toEqual(Object.keys(SDK_SERVICE_TIERS).sort());
    expect([...IMAGE_DETAILS].sort()).toEqual(Object.keys(SDK_IMAGE_DETAILS).sort());
  });

  it('is said in docs/chat.md to cover the installed openai SDK', () => {
    const { version } = JSON.parse(
      fs.readFileSync(path.join(ROOT, 'node_modules', 'openai', 'package.json'), 'utf8'),
    ) as { version: string };
    const [major, minor] = version.split('.');
    expect(fs.readFileSync(path.join(ROOT, 'docs', 'chat.md'), 'utf8')).toContain(`SDK (${major}.${minor})`);
  });

  it('gives every row a fate and a note on every family', () => {
    for (const entry of CHAT_PARAMETERS) {
      for (const provider of familyIds()) {
        expect(['honoured', 'enforced', 'ignored', 'refused']).toContain(fateOf(provider, entry.name)!.fate);
        expect(fateOf(provider, entry.name)!.note.length).toBeGreaterThan(10);
      }
    }
  });

  it('refuses a field on every family or on none, so the parser alone refuses it', () => {
    // The parser's `unsupported` rule runs before the model is resolved and knows no family.
    const familyDependent = CHAT_PARAMETERS.flatMap((entry) => {
      const refusing = familyIds().filter((provider) => fateOf(provider, entry.name)!.fate === 'refused');
      if (refusing.length === 0 || refusing.length === familyIds().length) return [];
      return [
        `${entry.name} is refused on ${refusing.join(', ')} only. A family-dependent refusal needs a check ` +
          'after the model is resolved and before the queue (ChatOrchestrator.turn): 400 unsupported_parameter ' +
          'with param naming the field and a message naming the family, e2e tests over HTTP on the refusing ' +
          'and the serving families, and docs/chat.md saying so.',
      ];
    });
    expect(familyDependent).toEqual([]);
    const refusedEverywhere = CHAT_PARAMETERS.filter((entry) =>
      familyIds().every((provider) => fateOf(provider, entry.name)!.fate === 'refused'),
    ).map((entry) => entry.name);
    const refusedByParser = CHAT_PARAMETERS.filter((entry) => entry.unsupported).map((entry) => entry.name);
    expect(refusedByParser).toEqual(refusedEverywhere);
  });

  it('is what docs/chat.md shows (scripts/gen-chat-docs.mjs --check)', () => {
    const check = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'gen-chat-docs.mjs'), '--check'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
  });
});

describe('parameter rules in the parser', () => {
  it.each([
    [{ n: 2 }, 'unsupported_parameter', 'n'],
    [{ n: 0 }, 'invalid_request', 'n'],
    [{ logprobs: true }, 'unsupported_parameter', 'logprobs'],
    [{ top_logprobs: 3 }, 'unsupported_parameter', 'top_logprobs'],
    [{ top_logprobs: 20 }, 'unsupported_parameter', 'top_logprobs'],
    [{ top_logprobs: 21 }, 'invalid_request', 'top_logprobs'],
    [{ audio: { voice: 'alloy', format: 'mp3' } }, 'unsupported_parameter', 'audio'],
    [{ modalities: ['text', 'audio'] }, 'unsupported_parameter', 'modalities'],
    [{ modalities: ['audio'] }, 'unsupported_parameter', 'modalities'],
    [{ modalities: 'text' }, 'invalid_request', 'modalities'],
    [{ service_tier: 'bogus' }, 'invalid_request', 'service_tier'],
    [{ service_tier: 'Priority' }, 'invalid_request', 'service_tier'],
    [{ logit_bias: { '50256': -100 } }, 'unsupported_parameter', 'logit_bias'],
    [{ web_search_options: {} }, 'unsupported_parameter', 'web_search_options'],
    [{ functions: [{ name: 'f' }] }, 'unsupported_parameter', 'functions'],
    [{ temperature: 'hot' }, 'invalid_request', 'temperature'],
    [{ temperature: 3 }, 'invalid_request', 'temperature'],
    [{ max_tokens: 1.5 }, 'invalid_request', 'max_tokens'],
    [{ stop: ['a', 'b', 'c', 'd', 'e'] }, 'invalid_request', 'stop'],
    [{ stop: [''] }, 'invalid_request', 'stop'],
    [{ stop: 'x'.repeat(257) }, 'invalid_request', 'stop'],
    [{ stop: '😀'.repeat(257) }, 'invalid_request', 'stop'],
    [{ temperature: -0.1 }, 'invalid_request', 'temperature'],
    [{ top_p: 1.1 }, 'invalid_request', 'top_p'],
    [{ response_format: { type: 'xml' } }, 'invalid_request', 'response_format'],
    [
      { response_format: { type: 'json_schema', json_schema: { name: 'has space', schema: {} } } },
      'invalid_request',
      'response_format',
    ],
  ])('%j → %s naming %s', (body, code, param) => {
    expect(refusalOf(body)).toMatchObject({ code, param });
  });

  const jsonSchema = (json_schema?: Record<string, unknown>) => ({
    response_format: { type: 'json_schema', ...(json_schema === undefined ? {} : { json_schema }) },
  });
  const NAME_RULE = 'response_format json_schema.name must match ^[A-Za-z0-9_-]{1,64}$';
  const UNSUPPORTED_TOP_LOGPROBS =
    'top_logprobs above 0 is not supported: no upstream family returns token log probabilities; send 0 or leave top_logprobs out';

  it.each<[Record<string, unknown>, string, string, string]>([
    // A token count or a seed is a safe integer: neither a fraction nor a number beyond 2^53.
    [{ max_tokens: 1e300 }, 'invalid_request', 'max_tokens', 'max_tokens must be a positive integer'],
    [{ seed: 1.5 }, 'invalid_request', 'seed', 'seed must be an integer'],
    // An array is not an object, whatever typeof says.
    [{ metadata: [] }, 'invalid_request', 'metadata', 'metadata must be an object'],
    // A logit_bias that is not a map is a shape error, not an unsupported map.
    [{ logit_bias: 5 }, 'invalid_request', 'logit_bias', 'logit_bias must be an object'],
    [{ logit_bias: true }, 'invalid_request', 'logit_bias', 'logit_bias must be an object'],
    [{ logit_bias: 'abc' }, 'invalid_request', 'logit_bias', 'logit_bias must be an object'],
    [{ logit_bias: [] }, 'invalid_request', 'logit_bias', 'logit_bias must be an object'],
    [{ top_logprobs: 1 }, 'unsupported_parameter', 'top_logprobs', UNSUPPORTED_TOP_LOGPROBS],
    [
      { function_call: { name: 'f' } },
      'unsupported_parameter',
      'function_call',
      'the deprecated function_call is not supported; send tool_choice',
    ],
    [jsonSchema(), 'invalid_request', 'response_format', 'response_format json_schema must be an object'],
    [jsonSchema({ name: 'x'.repeat(65) }), 'invalid_request', 'response_format', NAME_RULE],
    [
      jsonSchema({ name: 'x', schema: [] }),
      'invalid_request',
      'response_format',
      'response_format json_schema.schema must be an object',
    ],
    [
      jsonSchema({ name: 'x', schema: {}, strict: 'true' }),
      'invalid_request',
      'response_format',
      'response_format json_schema.strict must be a boolean',
    ],
  ])('%j → %s naming %s: %s', (body, code, param, publicMessage) => {
    expect(refusalOf(body)).toMatchObject({ code, param, publicMessage });
  });

  it('takes the deprecated function_call words that force nothing, and ignores them', () => {
    for (const function_call of ['none', 'auto']) expect(parseWith({ function_call }).parameters).toEqual({});
  });

  it("reads a json_schema's name by OpenAI's rule (up to 64 letters, digits, '_' and '-'), its strict flag and description", () => {
    const formatOf = (json_schema: Record<string, unknown>) =>
      parseWith(jsonSchema(json_schema)).parameters.responseFormat;
    const schema = { type: 'object' };
    for (const name of ['x'.repeat(64), 'reply-v2_final'])
      expect(formatOf({ name, schema })).toEqual({ type: 'json_schema', name, schema, strict: false });
    expect(formatOf({ name: 'reply', schema, strict: true, description: 'The reply.' })).toEqual({
      type: 'json_schema',
      name: 'reply',
      schema,
      strict: true,
      description: 'The reply.',
    });
    // null counts as absent, as everywhere in the body.
    expect(formatOf({ name: 'reply', schema, strict: null, description: null })).toEqual({
      type: 'json_schema',
      name: 'reply',
      schema,
      strict: false,
    });
  });

  it('keeps parallel_tool_calls as sent, false included (a client turning parallel calls off)', () => {
    expect(parseWith({ parallel_tool_calls: false }).parallelToolCalls).toBe(false);
    expect(parseWith({ parallel_tool_calls: true }).parallelToolCalls).toBe(true);
    expect(parseWith({ parallel_tool_calls: null }).parallelToolCalls).toBeUndefined();
  });

  it('runs faithful mode only when faithful is sent true', () => {
    expect(parseWith({}).faithful).toBe(false);
    expect(parseWith({ faithful: null }).faithful).toBe(false);
    expect(parseWith({ faithful: false }).faithful).toBe(false);
    expect(parseWith({ faithful: true }).faithful).toBe(true);
  });

  it('accepts the defaults clients send and keeps nothing for them', () => {
    const parsed = parseChatBody(
      {
        messages: [{ role: 'user', content: 'hi' }],
        n: 1,
        logprobs: false,
        top_logprobs: 0,
        logit_bias: {},
        modalities: ['text'],
        functions: [],
        service_tier: 'auto',
        user: 'u',
        store: false,
        metadata: {},
        stop: [],
        temperature: null,
        response_format: { type: 'text' },
      },
      'gpt-6.1-sol',
    );
    expect(parsed.parameters).toEqual({});
  });

  it('takes every service tier OpenAI defines, and an empty modalities list (no output beyond the default text)', () => {
    for (const service_tier of SERVICE_TIERS) expect(refusalOf({ service_tier })).toBeUndefined();
    expect(refusalOf({ modalities: [] })).toBeUndefined();
  });

  it('reads the values adapters may receive; max_completion_tokens wins over max_tokens', () => {
    const parsed = parseChatBody(
      {
        messages: [{ role: 'user', content: 'hi' }],
        temperature: 0,
        top_p: 0.5,
        seed: 7,
        max_tokens: 10,
        max_completion_tokens: 20,
        stop: 'END',
        presence_penalty: 0.1,
        frequency_penalty: -0.1,
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } },
      },
      'gpt-6.1-sol',
    );
    expect(parsed.parameters).toEqual({
      temperature: 0,
      topP: 0.5,
      seed: 7,
      maxTokens: 20,
      stop: ['END'],
      presencePenalty: 0.1,
      frequencyPenalty: -0.1,
      responseFormat: { type: 'json_schema', name: 'x', schema: { type: 'object' }, strict: false },
    });
  });

  it('takes every bound itself: sampling ranges are inclusive, and stop takes 4 entries of 256 characters', () => {
    const parametersOf = (body: Record<string, unknown>) => parseWith(body).parameters;
    expect(parametersOf({ temperature: 2, top_p: 1, presence_penalty: 2, frequency_penalty: 2 })).toEqual({
      temperature: 2,
      topP: 1,
      presencePenalty: 2,
      frequencyPenalty: 2,
    });
    expect(parametersOf({ temperature: 0, top_p: 0, presence_penalty: -2, frequency_penalty: -2 })).toEqual({
      temperature: 0,
      topP: 0,
      presencePenalty: -2,
      frequencyPenalty: -2,
    });
    expect(parametersOf({ stop: ['a', 'b', 'c', 'd'] })).toEqual({ stop: ['a', 'b', 'c', 'd'] });
    // Characters are code points: 256 emoji are 512 UTF-16 units, and still within the bound.
    for (const longest of ['x'.repeat(256), '😀'.repeat(256)])
      expect(parametersOf({ stop: longest })).toEqual({ stop: [longest] });
  });

  it('lets max_completion_tokens win over max_tokens in either order of the keys', () => {
    const maxTokensOf = (body: Record<string, unknown>) => parseWith(body).parameters.maxTokens;
    expect(maxTokensOf({ max_completion_tokens: 100, max_tokens: 50 })).toBe(100);
    expect(maxTokensOf({ max_tokens: 50, max_completion_tokens: 100 })).toBe(100);
    expect(maxTokensOf({ max_tokens: 50 })).toBe(50);
  });

  it('treats json_schema without a schema (absent or null) as json_object', () => {
    for (const json_schema of [{ name: 'x' }, { name: 'x', schema: null }]) {
      const parsed = parseChatBody(
        {
          messages: [{ role: 'user', content: 'hi' }],
          response_format: { type: 'json_schema', json_schema },
        },
        'gpt-6.1-sol',
      );
      expect(parsed.parameters.responseFormat).toEqual({ type: 'json_object' });
    }
  });
});

describe('per-family translation', () => {
  const values = {
    temperature: 0.5,
    maxTokens: 9,
    stop: ['x'],
    seed: 1,
    responseFormat: { type: 'json_object' as const },
  };

  it('passes each family only what it honours', () => {
    expect(upstreamParameters('provider_a', values)).toEqual({ responseFormat: { type: 'json_object' } });
    expect(upstreamParameters('provider_b', values)).toBe(values);
    expect(upstreamParameters('provider_c', values)).toEqual({});
  });

  it('reads each family once and keeps the reading', () => {
    expect(parameterFatesOf('provider_c')).toBe(parameterFatesOf('provider_c'));
    expect(parameterFatesOf('provider_c')).toMatchObject({ enforcesStop: true, enforcesJson: true });
    expect(parameterFatesOf('provider_b')).toMatchObject({ enforcesStop: false, enforcesJson: false });
  });

  it("holds strict tools in the gateway for every family but the one whose upstream holds them (its declaration's strictToolsUpstream)", () => {
    expect(parameterFatesOf('provider_a').enforcesStrictTools).toBe(false);
    expect(parameterFatesOf('provider_b').enforcesStrictTools).toBe(true);
    expect(parameterFatesOf('provider_c').enforcesStrictTools).toBe(true);
  });

  it('works for a family registered beside the built-in ones, from its own declaration', () => {
    const parameters = Object.fromEntries(
      PER_FAMILY_FIELDS.map((name) => [name, ignored('the test upstream takes none of it')]),
    ) as Record<(typeof PER_FAMILY_FIELDS)[number], ReturnType<typeof ignored>>;
    registerFamily({
      ...familyOf('provider_b'),
      id: 'provider_test_params',
      title: 'provider_test_params (a test)',
      errors: undefined,
      cliNames: [],
      parameters: { ...parameters, seed: honoured('`seed`') },
    });
    expect(upstreamParameters('provider_test_params', values)).toEqual({ seed: 1 });
    expect(fateOf('provider_test_params', 'n')).toEqual(fateOf('provider_a', 'n'));
  });

  it('names what a family forgot or declared that is not its to declare', () => {
    const { stop: _forgotten, ...rest } = familyOf('provider_a').parameters;
    const broken = { ...familyOf('provider_a'), id: 'provider_broken', parameters: { ...rest, n: ignored('x') } };
    expect(() => readFamilyParameters(broken as never)).toThrow(
      'family "provider_broken" declares its request-field fates wrongly (Family.parameters): "n" is not a per-family field (its fate is the shared table\'s); no fate for "stop"',
    );
  });
});

describe(normalizeTools.name, () => {
  it('reads nested and flat definitions, names exactly as sent, dropping nameless ones', () => {
    const tools = [
      { type: 'function', function: { name: ' read ', parameters: { type: 'object' } } },
      { type: 'custom', name: 'patch' },
      { type: 'function', function: {} },
      { type: 'function', function: { name: '  ' } },
    ];
    expect(normalizeTools(tools).map((tool) => [tool.name, tool.type])).toEqual([
      [' read ', 'function'],
      ['patch', 'custom'],
    ]);
    expect(normalizeTools([])).toEqual([]);
  });

  it('keeps what the families build their tools from: description, parameters, format and a strict flag, false included', () => {
    const parameters = { type: 'object', properties: { path: { type: 'string' } } };
    const format = { type: 'grammar', syntax: 'lark', definition: 'start: "x"' };
    const tools = [
      { type: 'function', function: { name: 'read', description: 'Read a file', parameters, strict: false } },
      { type: 'custom', custom: { name: 'patch', description: 'Apply a patch', format } },
      { type: 'function', function: { name: 'ls', strict: 'yes' } },
    ];
    expect(normalizeTools(tools).map(({ raw: _raw, ...tool }) => tool)).toEqual([
      { name: 'read', type: 'function', description: 'Read a file', parameters, format: undefined, strict: false },
      { name: 'patch', type: 'custom', description: 'Apply a patch', parameters: undefined, format, strict: undefined },
      {
        name: 'ls',
        type: 'function',
        description: undefined,
        parameters: undefined,
        format: undefined,
        strict: undefined,
      },
    ]);
  });

  it('is done once, by the parser: the parsed body carries the tools as sent and as read', () => {
    const tools = [{ type: 'function', function: { name: 'read' } }, { type: 'web_search' }];
    const parsed = parseWith({ tools });
    expect(parsed.tools).toBe(tools);
    expect(parsed.normalizedTools).toEqual([
      expect.objectContaining({ name: 'read', type: 'function', raw: tools[0] }),
    ]);
  });
});
