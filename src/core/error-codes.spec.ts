import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ErrorCode } from './error-codes';
import {
  answerLogLevel,
  CORE_ERROR_CODES,
  errorSpec,
  errorTable,
  familyMessage,
  formatWait,
  loginRequiredMessage,
  structuredHttpStatus,
  structuredStatus,
  upstreamErrorCodes,
} from './error-codes';
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

describe('the error table', () => {
  it('is documented in docs/error-codes.md: every code with its statuses, types and stream text, and nothing else', () => {
    const rows = documentedRows();
    expect([...rows.keys()].sort()).toEqual([...errorTable().keys()].sort());
    for (const [code, spec] of errorTable()) {
      const [, , status, type, openaiCode, structuredCode, structuredHttp, retryAfter, streamText] = rows.get(code)!;
      expect({ code, status, type, openaiCode, structuredCode, structuredHttp, retryAfter, streamText }).toEqual({
        code,
        status: String(spec.status),
        type: `\`${spec.type}\``,
        openaiCode: `\`${spec.openaiCode}\``,
        // A row answered in the OpenAI shape on every path says so, and the status that answer has.
        structuredCode: spec.openaiShapeOnly ? '— (OpenAI shape)' : `\`${spec.structuredCode}\``,
        structuredHttp: String(
          spec.openaiShapeOnly ? spec.status : (spec.structuredStatus ?? structuredStatus(spec.structuredCode)),
        ),
        retryAfter: String((spec as { retryAfterSeconds?: number }).retryAfterSeconds ?? ''),
        streamText: spec.streamText,
      });
    }
  });

  it('gives every 429 and 503 a Retry-After default', () => {
    for (const [code, spec] of errorTable()) {
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

  it("answers on the structured route with the row's own status, else its contract code's, and an OpenAI-shaped row's with its OpenAI status", () => {
    expect(structuredHttpStatus(errorSpec('request_timeout'))).toBe(408);
    expect(structuredHttpStatus(errorSpec('route_not_found'))).toBe(404);
    expect(structuredHttpStatus(errorSpec('request_too_large'))).toBe(400);
    expect(structuredHttpStatus(errorSpec('auth'))).toBe(401);
    expect(structuredHttpStatus(errorSpec('upstream'))).toBe(502);
  });

  it('uses the OpenAI types of docs/design/decisions.md §4', () => {
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

  it('answers the Responses API paths with the 404 docs/endpoints.md shows, naming the way back to Chat Completions', () => {
    const endpoints = fs.readFileSync(path.resolve(__dirname, '..', '..', 'docs', 'endpoints.md'), 'utf8');
    const shown = endpoints
      .split('\n')
      .filter((line) => line.startsWith('{"error":') && line.includes('Responses API'))
      .map((line) => JSON.parse(line) as unknown);
    const spec = errorSpec('responses_api_not_served');
    expect(shown).toEqual([{ error: { message: spec.message, type: spec.type, code: spec.openaiCode, param: null } }]);
  });

  it("words the refusals whose message is the client's only guide", () => {
    expect(errorSpec('auth').message).toBe(
      "the gateway's upstream login is missing or was refused (not your API key); log in again with the provider's CLI on the gateway's machine",
    );
    expect(errorSpec('request_timeout').message).toBe('the request did not arrive in time');
    expect(errorSpec('request_too_large').message).toBe('the request body exceeds the maximum size');
    expect(errorSpec('rate_limited').message).toBe('the upstream is rate limiting requests; retry later');
    expect(errorSpec('draining').message).toBe('the gateway is shutting down; retry on another instance');
  });

  it('words a context overflow as clients that read the message detect one (exceeds the context window)', () => {
    expect(errorSpec('context_window').message).toMatch(/exceeds the context window/i);
  });
});

describe('GatewayError', () => {
  it('attributes a failure to the request family only when it names none', () => {
    expect(new GatewayError('auth').attributeTo('provider_b').provider).toBe('provider_b');
    expect(new GatewayError('auth', { provider: 'provider_c' }).attributeTo('provider_b').provider).toBe('provider_c');
  });
});

describe(answerLogLevel.name, () => {
  it('is info for success, a client that left and a drain refusal; warn for another 4xx; error for a 5xx', () => {
    expect(answerLogLevel(200)).toBe('info');
    expect(answerLogLevel(200, 'draining')).toBe('info');
    expect(answerLogLevel(499, 'canceled')).toBe('info');
    expect(answerLogLevel(400, 'invalid_request')).toBe('warn');
    expect(answerLogLevel(404)).toBe('warn');
    expect(answerLogLevel(503, 'draining')).toBe('info');
    expect(answerLogLevel(503, 'idempotency_store_full')).toBe('error');
    expect(answerLogLevel(502, 'upstream')).toBe('error');
    expect(answerLogLevel(500, 'internal')).toBe('error');
  });

  it('marks only the drain as routine', () => {
    expect([...errorTable()].filter(([, spec]) => spec.routine).map(([code]) => code)).toEqual(['draining']);
  });
});

describe(formatWait.name, () => {
  it('reads as a person would, never shorter than the seconds given', () => {
    expect(formatWait(0)).toBe('1 s');
    expect(formatWait(39.2)).toBe('40 s');
    expect(formatWait(119)).toBe('119 s');
    expect(formatWait(120)).toBe('2 min');
    expect(formatWait(121)).toBe('3 min');
    expect(formatWait(7140)).toBe('119 min');
    expect(formatWait(7200)).toBe('2 h');
    expect(formatWait(18_000 + 181)).toBe('5 h 4 min');
  });
});

describe(upstreamErrorCodes.name, () => {
  it("is every row marked upstream: the core table's for every family, each family's own only for it", () => {
    const upstream = [...errorTable()].filter(([, spec]) => spec.upstream).map(([code]) => code);
    const all = ['provider_a', 'provider_b', 'provider_c'].flatMap((provider) => upstreamErrorCodes(provider));
    expect(new Set(all)).toEqual(new Set(upstream));
    expect(upstreamErrorCodes('provider_a')).toEqual(expect.arrayContaining(['auth', 'upstream', 'timeout']));
    expect(upstreamErrorCodes('provider_b')).toEqual(
      expect.arrayContaining(['auth', 'provider_account_unsupported', 'provider_project_required']),
    );
    expect(upstreamErrorCodes('provider_a')).not.toContain('provider_account_unsupported');
    // The core rows an upstream's failure carries, each a series at 0 from start-up; none of the gateway's own refusals.
    expect(upstreamErrorCodes('provider_a').filter((code) => code in CORE_ERROR_CODES)).toEqual([
      'auth',
      'rate_limited',
      'usage_limit',
      'usage_credit_exhausted',
      'usage_paused',
      'extra_usage_required',
      'context_window',
      'bad_request',
      'not_found',
      'model_requires_newer_client',
      'model_not_entitled',
      'upstream',
      'invalid_tool_call',
      'timeout',
    ]);
    for (const provider of ['provider_a', 'provider_b', 'provider_c']) {
      expect(upstreamErrorCodes(provider)).not.toContain('canceled');
      expect(upstreamErrorCodes(provider)).not.toContain('queue_full');
    }
  });
});

describe(familyMessage.name, () => {
  it('tells a missing login to log in again with the command, and that no restart is needed', () => {
    expect(loginRequiredMessage('provider_c', '`/login`')).toBe(
      'provider_c has no usable Claude Code CLI login on the gateway (this is not about your API key): `/login`; the gateway picks the new login up without a restart',
    );
  });

  it('says what to wait for when neither the reset nor the wait is known', () => {
    expect(familyMessage('usage_credit_exhausted', 'provider_a')).toBe(
      'provider_a: the usage credit of this Codex CLI login is used up; wait for the reset or add another login',
    );
    expect(familyMessage('usage_paused', 'provider_a')).toMatch(
      /else usage resumes when the cap resets; retry after it resets, or add a login of another organization$/,
    );
  });

  it('names no reset that is not a time, rather than failing to answer', () => {
    expect(familyMessage('usage_limit', 'provider_c', Number.NaN)).toBe(
      'provider_c: this Claude Code CLI login reached its usage limit; retry after the reset, or add another login',
    );
  });

  it("names the family's own turn timeout setting on a timeout", () => {
    expect(familyMessage('timeout', 'provider_b')).toBe(
      "provider_b: the upstream did not answer in time; retry, and if it keeps timing out, the gateway's operator can raise PROVIDER_B_TIMEOUT (the longest a turn may take) or GATEWAY_STREAM_IDLE_TIMEOUT (the longest wait for the upstream's next event)",
    );
  });

  it("leaves the table's message to an error of no known family", () => {
    expect(familyMessage('auth', undefined)).toBeUndefined();
  });
});
