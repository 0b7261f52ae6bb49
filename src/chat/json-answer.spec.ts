import { OutputValidator } from '../common/json-schema/output-validator';
import type { ChatEvent } from '../core/chat-event';
import { GatewayError } from '../core/gateway.error';
import { bufferTurn, JsonAnswer, replay, wholeTurn } from './json-answer';

const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false };
const strictJson = new JsonAnswer({ type: 'json_schema', name: 'count', schema, strict: true }, new OutputValidator());
const anyObject = new JsonAnswer({ type: 'json_object' }, new OutputValidator());
const finish: ChatEvent = { type: 'finish', reason: 'stop' };
const text = (value: string): ChatEvent => ({ type: 'text-delta', text: value });

describe(JsonAnswer.name, () => {
  it('tells the model the format in a last system message, with the schema as sent', () => {
    expect(strictJson.instruction()).toEqual({
      role: 'system',
      content:
        'Answer with exactly one JSON object and nothing else: no text before or after it, no code fences. ' +
        `The object must satisfy this JSON Schema (named count):\n${JSON.stringify(schema)}`,
    });
    expect(anyObject.instruction()?.content).toMatch(/exactly one JSON object/);
  });

  it('keeps reasoning, replaces the text with the object alone, keeps usage and finish', () => {
    const usage: ChatEvent = { type: 'usage', usage: { promptTokens: 1, completionTokens: 2, totalTokens: 3 } };
    const verdict = strictJson.judge([
      { type: 'reasoning-delta', text: 'hm' },
      text('Here: {"n":'),
      text(' 4}'),
      usage,
      finish,
    ]);
    expect(verdict).toEqual({
      kind: 'answer',
      events: [{ type: 'reasoning-delta', text: 'hm' }, text('{"n":4}'), usage, finish],
    });
  });

  it('calls prose, arrays, schema misses and overflowing numbers invalid; json_object takes any other object', () => {
    expect(strictJson.judge([text('four'), finish])).toEqual({ kind: 'invalid' });
    expect(strictJson.judge([text('[{"n":4}]'), finish])).toEqual({ kind: 'invalid' });
    expect(strictJson.judge([text('{"n":"4"}'), finish])).toEqual({ kind: 'invalid' });
    expect(anyObject.judge([text('{"anything":true}'), finish])).toMatchObject({ kind: 'answer' });
    // JSON.parse reads 1e400 as Infinity, which would go out as null.
    expect(anyObject.judge([text('{"anything":[1e400]}'), finish])).toEqual({ kind: 'invalid' });
  });

  it('passes tool calls through and reports upstream failures and unfinished turns as failed', () => {
    const call: ChatEvent = { type: 'tool-call', call: { id: 'c1', name: 'ls', kind: 'function', arguments: '{}' } };
    expect(strictJson.judge([call, finish])).toEqual({ kind: 'answer', events: [call, finish] });
    const error = new GatewayError('rate_limited');
    expect(strictJson.judge([text('{"n":'), { type: 'error', error }])).toEqual({ kind: 'failed', error });
    expect(strictJson.judge([text('{"n":4}')])).toMatchObject({ kind: 'failed', error: { code: 'upstream' } });
  });

  it('judges the text when the only call is an empty one, which the renderer drops', () => {
    const empty: ChatEvent = { type: 'tool-call', call: { id: 'c1', name: '', kind: 'function', arguments: '' } };
    expect(strictJson.judge([empty, text('four'), finish])).toEqual({ kind: 'invalid' });
    expect(strictJson.judge([empty, text('{"n":4}'), finish])).toEqual({
      kind: 'answer',
      events: [text('{"n":4}'), empty, finish],
    });
  });

  it('takes a refusal (content_filter) as the answer, with or without text, rather than asking again', () => {
    const refusal: ChatEvent = { type: 'finish', reason: 'content_filter' };
    expect(strictJson.judge([refusal])).toEqual({ kind: 'answer', events: [refusal] });
    expect(strictJson.judge([text('I cannot'), refusal])).toEqual({
      kind: 'answer',
      events: [text('I cannot'), refusal],
    });
  });

  it('finds a schema Ajv refuses before any call', () => {
    const refusal = new JsonAnswer(
      { type: 'json_schema', name: 'x', schema: { type: 'object', required: 'n' }, strict: false },
      new OutputValidator(),
    ).schemaRefusal();
    expect(refusal).toMatchObject({ code: 'invalid_request', param: 'response_format' });
    expect(refusal?.publicMessage).toBe(
      'response_format.json_schema.schema is not a valid JSON Schema ($: "required" must be array)',
    );
    expect(strictJson.schemaRefusal()).toBeUndefined();
    expect(anyObject.schemaRefusal()).toBeUndefined();
  });

  it('refuses a schema over the size bounds without compiling it, naming every bound passed', () => {
    const validator = new OutputValidator();
    const names = Array.from({ length: 1_000 }, (_, index) => `v${index}`);
    const schema = {
      anyOf: names.map((name) => ({ type: 'object', properties: { [name]: { enum: [name, 1] } } })),
    };
    const refusal = new JsonAnswer(
      { type: 'json_schema', name: 'x', schema, strict: false },
      validator,
    ).schemaRefusal();
    expect(refusal?.publicMessage).toBe(
      'response_format.json_schema.schema is too large for the gateway to check answers against (' +
        '$: the schema has 2001 nodes (the root, each property\'s schema, each "items" schema and any other object); at most 1000 are allowed; ' +
        '$: the schema has 2000 enum values in all; at most 1000 are allowed); make it smaller (docs/chat.md "Structured output")',
    );
    expect(validator.compileCount).toBe(0);
  });

  it('names the first three of four bounds passed and counts the fourth', () => {
    // Four properties, each a chain of objects one level deeper than the bound.
    const chain = (levels: number): object =>
      levels === 0 ? { type: 'string' } : { type: 'object', properties: { x: chain(levels - 1) } };
    const schema = {
      type: 'object',
      properties: Object.fromEntries(['a', 'b', 'c', 'd'].map((name) => [name, chain(10)])),
    };
    const deep = (name: string) => `$.${name}${'.x'.repeat(10)}: schema nesting exceeds 10 levels`;
    expect(
      new JsonAnswer({ type: 'json_schema', name: 'x', schema, strict: false }, new OutputValidator()).schemaRefusal()
        ?.publicMessage,
    ).toBe(
      `response_format.json_schema.schema is too large for the gateway to check answers against (${deep('a')}; ${deep('b')}; ${deep('c')}; … and 1 more); make it smaller (docs/chat.md "Structured output")`,
    );
  });

  it('names all of exactly three bounds passed or places, with nothing counted after them', () => {
    const chain = (levels: number): object =>
      levels === 0 ? { type: 'string' } : { type: 'object', properties: { x: chain(levels - 1) } };
    const tooDeep = {
      type: 'object',
      properties: Object.fromEntries(['a', 'b', 'c'].map((name) => [name, chain(10)])),
    };
    const deep = (name: string) => `$.${name}${'.x'.repeat(10)}: schema nesting exceeds 10 levels`;
    const refusalOf = (schema: Record<string, unknown>) =>
      new JsonAnswer({ type: 'json_schema', name: 'x', schema, strict: false }, new OutputValidator()).schemaRefusal()
        ?.publicMessage;
    expect(refusalOf(tooDeep)).toBe(
      `response_format.json_schema.schema is too large for the gateway to check answers against (${deep('a')}; ${deep('b')}; ${deep('c')}); make it smaller (docs/chat.md "Structured output")`,
    );
    const requiresProto = { type: 'object', required: ['__proto__'] };
    expect(refusalOf({ type: 'object', properties: { a: requiresProto, b: requiresProto, c: requiresProto } })).toBe(
      'response_format.json_schema.schema declares or requires a property named "__proto__", which the gateway cannot check answers for (at $.a, $.b, $.c); rename it (docs/chat.md "Structured output")',
    );
  });

  it('refuses a schema naming __proto__, naming the first three of four places and counting the fourth', () => {
    const requiresProto = { type: 'object', required: ['__proto__'] };
    const schema = {
      type: 'object',
      properties: { a: requiresProto, b: requiresProto, c: requiresProto, d: requiresProto },
    };
    const refusal = new JsonAnswer(
      { type: 'json_schema', name: 'x', schema, strict: false },
      new OutputValidator(),
    ).schemaRefusal();
    expect(refusal).toMatchObject({ code: 'invalid_request', param: 'response_format' });
    expect(refusal?.publicMessage).toBe(
      'response_format.json_schema.schema declares or requires a property named "__proto__", which the gateway cannot check answers for (at $.a, $.b, $.c; … and 1 more); rename it (docs/chat.md "Structured output")',
    );
  });
});

describe('JsonAnswer held upstream (a stop cut on a family that takes the format upstream)', () => {
  const validator = new OutputValidator();
  const heldUpstream = new JsonAnswer({ type: 'json_schema', name: 'count', schema, strict: true }, validator, true);

  it('gives the model no instruction and compiles no schema', () => {
    expect(heldUpstream.instruction()).toBeUndefined();
    expect(heldUpstream.schemaRefusal()).toBeUndefined();
    expect(validator.compileCount).toBe(0);
  });

  it('passes an answer no stop sequence cut as it came, and one the cut left a whole object unchanged', () => {
    const prose = [text('not JSON at all'), finish];
    expect(heldUpstream.judge(prose, false)).toEqual({ kind: 'answer', events: prose });
    const whole = [text('{"n":'), text('1}\n'), finish];
    expect(heldUpstream.judge(whole, true)).toEqual({ kind: 'answer', events: whole });
    expect(validator.compileCount).toBe(0);
  });

  it('finds an answer the cut left without the whole object invalid', () => {
    expect(heldUpstream.judge([text('{"n":'), finish], true)).toEqual({ kind: 'invalid' });
  });
});

describe(bufferTurn.name, () => {
  it('reads up to the terminal event and replays what it read', async () => {
    const buffered = await bufferTurn(replay([text('a'), finish, text('after')]));
    expect(buffered).toEqual([text('a'), finish]);
    const error: ChatEvent = { type: 'error', error: new GatewayError('upstream') };
    expect(await bufferTurn(replay([text('a'), error, text('after'), finish]))).toEqual([text('a'), error]);
  });
});

describe(wholeTurn.name, () => {
  it('takes a finished turn as it came, tool calls and text alike', () => {
    const call: ChatEvent = { type: 'tool-call', call: { id: 'c1', name: 'ls', kind: 'function', arguments: '{}' } };
    const events = [text('Listing.'), call, finish];
    expect(wholeTurn(events)).toEqual({ kind: 'answer', events });
  });

  it("fails with the upstream's error, or as unfinished when the events ran out before the finish", () => {
    const error = new GatewayError('upstream', { detail: 'reset' });
    expect(wholeTurn([text('a'), { type: 'error', error }])).toEqual({ kind: 'failed', error });
    const unfinished = wholeTurn([text('a')]);
    expect(unfinished.kind).toBe('failed');
    expect(unfinished.kind === 'failed' && unfinished.error.code).toBe('upstream');
  });
});
