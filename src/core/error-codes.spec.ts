import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ErrorCode } from './error-codes';
import { ERROR_CODES, errorSpec, structuredStatus } from './error-codes';
import { errorResponseBody } from '../common/errors/error-response';
import { GatewayError } from './gateway.error';

const DOC = path.resolve(__dirname, '..', '..', 'docs', 'error-codes.md');

/** The rows of the table in docs/error-codes.md, by internal code, as trimmed cells. */
function documentedRows(): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const line of fs.readFileSync(DOC, 'utf8').split('\n')) {
    const match = /^\| `([a-z_]+)` \|/.exec(line);
    if (!match) continue;
    rows.set(
      match[1],
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
  }
  return rows;
}

describe('ERROR_CODES', () => {
  it('is documented in docs/error-codes.md: every code with its statuses, types and stream text, and nothing else', () => {
    const rows = documentedRows();
    expect([...rows.keys()].sort()).toEqual(Object.keys(ERROR_CODES).sort());
    for (const [code, spec] of Object.entries(ERROR_CODES)) {
      const [, , status, type, openaiCode, structuredCode, structuredHttp, retryAfter, streamText] = rows.get(code)!;
      expect({ code, status, type, openaiCode, structuredCode, structuredHttp, retryAfter, streamText }).toEqual({
        code,
        status: String(spec.status),
        type: `\`${spec.type}\``,
        openaiCode: `\`${spec.openaiCode}\``,
        structuredCode: `\`${spec.structuredCode}\``,
        structuredHttp: String(
          (spec as { structuredStatus?: number }).structuredStatus ?? structuredStatus(spec.structuredCode),
        ),
        retryAfter: String((spec as { retryAfterSeconds?: number }).retryAfterSeconds ?? ''),
        streamText: spec.streamText,
      });
    }
  });

  it('gives every 429 and 503 a Retry-After default', () => {
    for (const [code, spec] of Object.entries(ERROR_CODES)) {
      if (spec.status === 429 || spec.status === 503)
        expect({ code, retry: (spec as { retryAfterSeconds?: number }).retryAfterSeconds }).toEqual({
          code,
          retry: expect.any(Number),
        });
    }
  });

  it('maps the contract codes to the contract statuses', () => {
    expect(structuredStatus('auth_error')).toBe(401);
    expect(structuredStatus('unsupported_model')).toBe(404);
    expect(structuredStatus('invalid_schema')).toBe(400);
    expect(structuredStatus('invalid_request')).toBe(400);
    expect(structuredStatus('rate_limited')).toBe(429);
    expect(structuredStatus('unavailable')).toBe(503);
    expect(structuredStatus('timeout')).toBe(504);
    expect(structuredStatus('upstream_error')).toBe(502);
    expect(structuredStatus('output_validation_failed')).toBe(422);
    expect(structuredStatus('idempotency_conflict')).toBe(409);
  });

  it('uses the OpenAI types of design.md §4', () => {
    const expectations: [ErrorCode, number, string, string][] = [
      ['invalid_request', 400, 'invalid_request_error', 'invalid_request'],
      ['invalid_api_key', 401, 'authentication_error', 'invalid_api_key'],
      ['model_not_found', 404, 'invalid_request_error', 'model_not_found'],
      ['request_too_large', 413, 'invalid_request_error', 'request_too_large'],
      ['queue_full', 429, 'rate_limit_error', 'queue_full'],
      ['upstream', 502, 'upstream_error', 'upstream_error'],
      ['draining', 503, 'service_unavailable', 'service_unavailable'],
      ['timeout', 504, 'timeout', 'timeout'],
    ];
    for (const [code, status, type, openaiCode] of expectations) {
      expect(errorSpec(code)).toMatchObject({ status, type, openaiCode });
    }
  });
});

describe(errorResponseBody.name, () => {
  it('renders the OpenAI shape with param null and our message, never the internal detail', () => {
    const error = new GatewayError('upstream', { detail: 'upstream said: secret stack trace' });
    expect(errorResponseBody(error, false)).toEqual({
      status: 502,
      body: { error: { message: 'upstream error', type: 'upstream_error', code: 'upstream_error', param: null } },
    });
  });

  it('renders the structured shape with details, the request id echo and the contract version', () => {
    const error = new GatewayError('invalid_schema', { details: ['$ref is not supported'] });
    expect(errorResponseBody(error, true, 'req-1')).toEqual({
      status: 400,
      body: {
        error: {
          code: 'invalid_schema',
          message: 'schema uses unsupported constructs',
          details: ['$ref is not supported'],
        },
        request_id: 'req-1',
        contract_version: '2.0.0',
      },
    });
  });
});

describe('failures of a known family name the fix', () => {
  it.each([
    ['provider_a', 'Codex CLI', '`codex login`'],
    ['provider_b', 'Gemini CLI', '"Login with Google"'],
    ['provider_c', 'Claude Code CLI', '`/login`'],
  ] as const)('%s: a missing login is a 403 upstream_login_required naming %s and %s', (provider, cli, command) => {
    const { status, body } = errorResponseBody(new GatewayError('auth', { provider }), false);
    expect(status).toBe(403);
    expect(body).toEqual({
      error: {
        message: expect.stringContaining(command),
        type: 'permission_error',
        code: 'upstream_login_required',
        param: null,
      },
    });
    expect(JSON.stringify(body)).toContain(cli);
    // Structured inference keeps the contract's auth_error 401, with the same message.
    const structured = errorResponseBody(new GatewayError('auth', { provider }), true);
    expect(structured).toMatchObject({
      status: 401,
      body: { error: { code: 'auth_error', message: expect.stringContaining(command) } },
    });
  });

  it('names the install for a missing claude, and the reset of a spent credit', () => {
    expect(
      errorResponseBody(new GatewayError('provider_cli_missing', { provider: 'provider_c' }), false).body,
    ).toMatchObject({
      error: {
        code: 'provider_cli_missing',
        message: expect.stringContaining('npm install -g @anthropic-ai/claude-code'),
      },
    });
    const credit = errorResponseBody(
      new GatewayError('usage_credit_exhausted', {
        provider: 'provider_c',
        resetsAt: Date.UTC(2030, 2, 17, 17, 46, 40),
      }),
      false,
    );
    expect(credit).toEqual({
      status: 429,
      body: {
        error: {
          message: expect.stringContaining('Agent SDK usage credit'),
          type: 'insufficient_quota',
          code: 'insufficient_quota',
          param: null,
        },
      },
    });
    expect(JSON.stringify(credit.body)).toContain('resets 2030-03-17T17:46:40.000Z');
  });

  it('keeps an explicit public message, and the generic one when the family is unknown', () => {
    expect(
      errorResponseBody(new GatewayError('auth', { provider: 'provider_a', publicMessage: 'ours' }), false).body,
    ).toMatchObject({ error: { message: 'ours' } });
    expect(errorResponseBody(new GatewayError('auth'), false).body).toMatchObject({
      error: { message: errorSpec('auth').message },
    });
  });

  it('attributes a failure to the request family only when it names none', () => {
    expect(new GatewayError('auth').attributeTo('provider_b').provider).toBe('provider_b');
    expect(new GatewayError('auth', { provider: 'provider_c' }).attributeTo('provider_b').provider).toBe('provider_c');
  });
});
