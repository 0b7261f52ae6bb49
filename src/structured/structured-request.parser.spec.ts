import { GatewayError } from '../core/gateway.error';
import { MAX_INPUT_BYTES, MAX_SCHEMA_BYTES, parseStructuredRequest } from './structured-request.parser';

const schema = { type: 'object', additionalProperties: false, required: ['a'], properties: { a: { type: 'string' } } };
const valid = { request_id: 'r-1', model: 'gpt-5.6-sol', input: 'text', schema };

function failure(body: unknown, isJson = true): GatewayError {
  try {
    parseStructuredRequest(isJson, body);
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a failure');
}

const expectInvalid = (body: unknown, message: string) => {
  const error = failure(body);
  expect([error.code, error.publicMessage]).toEqual(['invalid_request', message]);
};

/** A schema whose compact JSON is exactly `bytes` long. */
function schemaOfSize(bytes: number): Record<string, unknown> {
  const shell = { ...schema, description: '' };
  const padding = bytes - Buffer.byteLength(JSON.stringify(shell));
  return { ...shell, description: 'x'.repeat(padding) };
}

describe('parseStructuredRequest', () => {
  it('returns the envelope with values exactly as sent', () => {
    const envelope = parseStructuredRequest(true, {
      ...valid,
      request_id: ' r-1 ',
      idempotency_key: 'k',
      operation: 'op',
      schema_version: 'v1',
      schema_name: 'n',
      reasoning_effort: 'high',
      verbosity: 'low',
      deadline_ms: 30000,
      max_output_tokens: 5,
      unknown_field: { anything: true },
    });
    expect(envelope).toEqual({
      requestId: ' r-1 ',
      idempotencyKey: 'k',
      operation: 'op',
      schemaVersion: 'v1',
      model: 'gpt-5.6-sol',
      input: 'text',
      deadlineMs: 30000,
      reasoningEffort: 'high',
      verbosity: 'low',
      schemaName: 'n',
      schema,
    });
  });

  it('requires a JSON content type and an object body', () => {
    expect(failure(valid, false).publicMessage).toBe('Content-Type must be application/json');
    for (const body of [undefined, null, [], 'text', 5]) expectInvalid(body, 'the request body must be a JSON object');
  });

  it('checks field types before bounds', () => {
    expectInvalid({ ...valid, request_id: 5 }, 'request_id must be a string');
    expectInvalid({ ...valid, verbosity: true }, 'verbosity must be a string');
    expectInvalid({ ...valid, schema_name: {} }, 'schema_name must be a string');
    expectInvalid(
      { request_id: '', model: 'm', input: 'x', deadline_ms: '100' },
      'deadline_ms must be a non-negative integer',
    );
    expectInvalid({ ...valid, deadline_ms: 1.5 }, 'deadline_ms must be a non-negative integer');
  });

  it('applies the bounds in table order with exact messages (behaviour 36)', () => {
    expectInvalid({ ...valid, request_id: undefined, model: undefined }, 'request_id is required');
    expectInvalid({ ...valid, request_id: ' \n\t' }, 'request_id is required');
    expectInvalid({ ...valid, request_id: null }, 'request_id is required');
    expectInvalid(
      { ...valid, request_id: 'r'.repeat(129), idempotency_key: 'k'.repeat(201) },
      'request_id exceeds 128 characters',
    );
    expectInvalid(
      { ...valid, idempotency_key: 'k'.repeat(201), operation: 'o'.repeat(129) },
      'idempotency_key exceeds 200 characters',
    );
    expectInvalid(
      { ...valid, operation: 'o'.repeat(129), schema_version: 'v'.repeat(65) },
      'operation exceeds 128 characters',
    );
    expectInvalid({ ...valid, schema_version: 'v'.repeat(65), model: '' }, 'schema_version exceeds 64 characters');
    expectInvalid({ ...valid, model: '', input: '' }, 'model is required');
    expectInvalid({ ...valid, model: ' \t' }, 'model is required');
    expectInvalid({ ...valid, input: '  ' }, 'input is required');
    expectInvalid({ ...valid, input: 'x'.repeat(MAX_INPUT_BYTES + 1), deadline_ms: -1 }, 'input exceeds 1048576 bytes');
    expectInvalid({ ...valid, deadline_ms: -1, reasoning_effort: 'max' }, 'deadline_ms must be a non-negative integer');
    expectInvalid(
      { ...valid, reasoning_effort: 'max', verbosity: 'loud' },
      'reasoning_effort is not supported; use one of none, minimal, low, medium, high, xhigh',
    );
    expectInvalid(
      { ...valid, verbosity: 'loud', schema: undefined },
      'verbosity is not supported; use one of low, medium, high',
    );
    expectInvalid({ ...valid, schema: undefined }, 'schema is required');
  });

  it('passes values exactly at the bounds, counting code points and UTF-8 bytes', () => {
    const astral = '😀'; // 1 code point, 2 UTF-16 units, 4 UTF-8 bytes
    const envelope = parseStructuredRequest(true, {
      ...valid,
      request_id: astral.repeat(128),
      idempotency_key: 'é'.repeat(200),
      operation: 'o'.repeat(128),
      schema_version: astral.repeat(64),
      input: 'x'.repeat(MAX_INPUT_BYTES),
      deadline_ms: 0,
    });
    expect(envelope.requestId).toHaveLength(256);
    expectInvalid({ ...valid, request_id: astral.repeat(129) }, 'request_id exceeds 128 characters');
    expectInvalid({ ...valid, schema_version: astral.repeat(65) }, 'schema_version exceeds 64 characters');
    expectInvalid({ ...valid, input: astral.repeat(MAX_INPUT_BYTES / 4) + 'x' }, 'input exceeds 1048576 bytes');
  });

  it('accepts every documented effort and verbosity', () => {
    for (const effort of ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'])
      parseStructuredRequest(true, { ...valid, reasoning_effort: effort });
    for (const verbosity of ['low', 'medium', 'high']) parseStructuredRequest(true, { ...valid, verbosity });
    expectInvalid({ ...valid, verbosity: 'Low' }, 'verbosity is not supported; use one of low, medium, high');
  });

  it('rejects a schema that is not an object as invalid_schema', () => {
    for (const bad of [[], 'schema', 3, true]) {
      const error = failure({ ...valid, schema: bad });
      expect([error.code, error.publicMessage, error.details]).toEqual([
        'invalid_schema',
        'schema must be a JSON object',
        ['$: schema node must be a JSON object'],
      ]);
    }
  });

  it('measures the compact schema before walking it (behaviour 37)', () => {
    const atLimit = schemaOfSize(MAX_SCHEMA_BYTES);
    expect(parseStructuredRequest(true, { ...valid, schema: atLimit }).schema).toEqual(atLimit);
    const oversized = { ...schemaOfSize(MAX_SCHEMA_BYTES + 1), $ref: '#' };
    const error = failure({ ...valid, schema: oversized });
    expect(error.code).toBe('invalid_schema');
    expect(error.publicMessage).toBe('schema exceeds the maximum size of 262144 bytes');
  });

  it('answers subset violations with every detail', () => {
    const error = failure({
      ...valid,
      schema: { type: 'object', properties: { a: { type: 'string', format: 'email' } }, required: ['a'] },
    });
    expect([error.code, error.publicMessage, error.details]).toEqual([
      'invalid_schema',
      'schema uses unsupported constructs',
      ['$: "additionalProperties" must be present and set to false', '$.a: keyword "format" is not supported'],
    ]);
  });
});
