import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { GatewayError } from '../../core/gateway.error';
import { claudeCodeVersion } from '../../accounts/provider-c/provider-c.cli-version';
import { classifyRunFailure, parseRetryAfterSeconds, type CliErrorReport } from './provider-c.errors';
import { PROVIDER_C_FIX } from './provider-c.fix';

const exit = (stderr: string, code = 1) => classifyRunFailure({ kind: 'exit', code, signal: null, stderr });

describe(classifyRunFailure.name, () => {
  // Claude Code 2.1.332's own words (its bundle, __fixtures__/claude-code-2.1.332/) and the API's.
  it.each([
    'Invalid API key · Please run /login',
    'Not logged in · Please run /login',
    'Error: Not logged in',
    'Failed to authenticate. API Error: 401 Invalid bearer token',
    'Failed to authenticate: OAuth token revoked. Please log in again or contact your administrator.',
    'Authentication required · Sign in again to continue',
    'Invalid auth token · Fix external auth token',
    'OAuth token has expired',
    'API Error: 401 {"type":"error"}',
    'authentication_error',
    // The reason is the last line; what came before is progress.
    'Loading settings\nNot logged in · Please run /login\n',
  ])('classifies %j as auth (401), not retryable', (stderr) => {
    const error = exit(stderr);
    expect(error.code).toBe('auth');
    expect(error.retryable).toBe(false);
  });

  it.each([
    'rate limit exceeded',
    'API Error: 429',
    'Too Many Requests',
    'quota exhausted',
    '5-hour limit reached',
    'Server is temporarily limiting requests',
    // Claude Code 2.1.332's whole wording (__fixtures__/claude-code-2.1.332/rate-limit-429-no-reset.jsonl).
    'API Error: Server is temporarily limiting requests (not your usage limit) · Number of request tokens has exceeded your per-minute rate limit',
  ])('classifies %j as rate_limited with Retry-After 60 by default', (stderr) => {
    const error = exit(stderr);
    expect(error.code).toBe('rate_limited');
    expect(error.retryAfterHeader).toBe(60);
    expect(error.retryable).toBe(false);
  });

  it.each([
    'Claude AI usage limit reached',
    "You've hit your limit · resets 4am (Asia/Shanghai)",
    "You've hit your session limit · resets 11:30am (UTC)",
    'You’ve hit your weekly limit · resets Oct 12, 4am',
    "You've hit your 5-hour limit · resets 9:13pm (UTC)",
  ])(
    'classifies the subscription cap %j as usage_limit (429) whose reset stays unknown when it is a clock time',
    (stderr) => {
      const error = exit(stderr);
      expect(error.code).toBe('usage_limit');
      expect(error.spec.status).toBe(429);
      // No wait is made up: the table's Retry-After (300), the pool's default cooldown, "retry after the reset".
      expect(error.retryAfterSeconds).toBeUndefined();
      expect(error.retryAfterHeader).toBe(300);
      expect(error.retryable).toBe(false);
    },
  );

  it("classifies the CLI's words for the organization's pause at its daily cap as usage_paused (429), resting an hour, not retried", () => {
    // Claude Code 2.1.332's whole wording (__fixtures__/claude-code-2.1.332/daily-cap-paused-429.jsonl).
    const error = exit('Usage is paused for your organization. For help, please contact support.');
    expect(error).toMatchObject({ code: 'usage_paused', retryable: false, retryAfterSeconds: 3600 });
    expect(error.fix).toContain('claude.ai/admin-settings/usage');
  });

  it('checks auth before limits (table order)', () => {
    expect(exit('Invalid API key · Please run /login · usage limit reached').code).toBe('auth');
  });

  it('classifies anything else as a retryable upstream error', () => {
    const error = exit('Claude crashed');
    expect(error.code).toBe('upstream');
    expect(error.retryable).toBe(true);
  });

  it.each([
    ['an earlier line naming a login or OAuth file', 'reading /home/gw/.claude/oauth-login.json\nClaude crashed\n'],
    ['an earlier line with login words', 'Not logged in to the MCP server "docs"\nsegmentation fault\n'],
    [
      'a last stack frame of the OAuth code',
      'TypeError: undefined is not a function\n    at refreshOAuthLogin (/$bunfs/root/claude:401:12)',
    ],
    ['a last stack frame at line 429', 'RangeError: boom\n    at handleRateLimit (/$bunfs/root/claude:429:7)'],
    ["a proxy's own refusal", 'error: 407 Proxy Authentication Required'],
  ])(
    'classifies a crash with %s as a retryable upstream error: its last line is no login or limit message',
    (_case, stderr) => {
      const error = exit(stderr);
      expect(error.code).toBe('upstream');
      expect(error.retryable).toBe(true);
    },
  );

  it('prefers the result text of an error result over stderr when the CLI set no structured field', () => {
    expect(
      classifyRunFailure({
        kind: 'error_result',
        report: { text: 'usage limit reached' },
        stderr: 'Not logged in · Please run /login',
      }).code,
    ).toBe('usage_limit');
    expect(
      classifyRunFailure({
        kind: 'error_result',
        report: { text: '' },
        stderr: 'Not logged in · Please run /login',
      }).code,
    ).toBe('auth');
    // Its last line alone, as for an exit.
    expect(
      classifyRunFailure({
        kind: 'error_result',
        report: { text: '' },
        stderr: 'Not logged in · Please run /login\nClaude crashed',
      }).code,
    ).toBe('upstream');
  });

  describe('structured fields of an error result', () => {
    const report = (fields: Partial<CliErrorReport>): GatewayError =>
      classifyRunFailure(
        { kind: 'error_result', report: { text: 'misleading: please login', ...fields }, stderr: '' },
        1_000_000_000_000,
      );
    it.each([
      [{ error: 'authentication_failed' }, 'auth', false],
      [{ apiStatus: 403, apiErrorType: 'permission_error' }, 'auth', false],
      // The API's status alone is enough: the login is refused, and no retry helps.
      [{ error: 'unknown', apiStatus: 401 }, 'auth', false],
      [{ error: 'unknown', apiStatus: 403 }, 'auth', false],
      [{ error: 'rate_limit', apiStatus: 429 }, 'rate_limited', false],
      [{ error: 'rate_limit', apiStatus: 429, apiError: 'usage_limit_reached' }, 'usage_limit', false],
      [{ error: 'invalid_request', apiStatus: 400 }, 'bad_request', false],
      [{ error: 'invalid_request', apiStatus: 400, text: 'Prompt is too long' }, 'context_window', false],
      // A 413 is the request over the API's size, whatever its words: the client compacts.
      [{ error: 'invalid_request', apiStatus: 413, text: 'Request too large' }, 'context_window', false],
      [{ apiStatus: 404, apiErrorType: 'not_found_error' }, 'not_found', false],
      [{ error: 'billing_error' }, 'usage_credit_exhausted', false],
      [{ error: 'server_error', apiStatus: 529, apiErrorType: 'overloaded_error' }, 'upstream', true],
      [{ error: 'server_error', apiStatus: 500 }, 'upstream', true],
      [{ error: 'unknown', terminalReason: 'api_error' }, 'upstream', true],
    ] as const)('%o → %s (retryable %s), whatever the text says', (fields, code, retryable) => {
      expect(report(fields)).toMatchObject({ code, retryable });
    });

    it('takes Retry-After from the reported reset, else the usage limit keeps it unknown and a rate limit assumes 60', () => {
      expect(
        report({ apiStatus: 429, apiError: 'usage_limit_reached', resetsAt: 1_000_000_000 + 5400 }).retryAfterHeader,
      ).toBe(5400);
      const past = report({ apiStatus: 429, apiError: 'usage_limit_reached', resetsAt: 999_999_000 });
      expect(past.retryAfterSeconds).toBeUndefined();
      expect(past.retryAfterHeader).toBe(300);
      expect(report({ apiStatus: 429 }).retryAfterHeader).toBe(60);
    });

    it('logs only the enumerated fields', () => {
      const error = report({
        error: 'server_error',
        apiStatus: 529,
        apiErrorType: 'overloaded_error',
        terminalReason: 'api_error',
        text: 'API Error: 529 secret words',
      });
      expect(error.detail).toBe('error result (server_error, 529, overloaded_error, api_error)');
    });
  });

  it('never retries spawn failures, oversized lines or timeouts', () => {
    expect(classifyRunFailure({ kind: 'spawn', errno: 'ENOENT' })).toMatchObject({
      code: 'provider_cli_missing',
      retryable: false,
      provider: 'provider_c',
    });
    expect(classifyRunFailure({ kind: 'spawn', errno: 'EACCES' })).toMatchObject({
      code: 'provider_cli_missing',
      retryable: false,
    });
    // PROVIDER_C_COMMAND names a path under a file: the command is missing too, not a system limit.
    expect(classifyRunFailure({ kind: 'spawn', errno: 'ENOTDIR' })).toMatchObject({
      code: 'provider_cli_missing',
      retryable: false,
      upstream: { errno: 'ENOTDIR', fix: PROVIDER_C_FIX.install },
    });
    expect(classifyRunFailure({ kind: 'spawn', errno: 'EMFILE' })).toMatchObject({
      code: 'upstream',
      retryable: false,
    });
    // The log line's errno and fix (upstream_errno, fix).
    expect(classifyRunFailure({ kind: 'spawn', errno: 'ENOENT' }).upstream).toEqual({
      errno: 'ENOENT',
      fix: expect.stringContaining('PROVIDER_C_COMMAND'),
    });
    // A command path that is there but cannot run: its own fix, for the client and the log.
    const directory = { reason: 'PROVIDER_C_COMMAND is a directory', fix: 'set PROVIDER_C_COMMAND to the file' };
    const refused = classifyRunFailure({ kind: 'spawn', errno: 'EACCES' }, 0, directory);
    expect(refused).toMatchObject({ code: 'provider_cli_missing', upstream: { errno: 'EACCES', fix: directory.fix } });
    expect(refused.publicMessage).toBe(
      "provider_c cannot run the Claude Code CLI on the gateway's machine (PROVIDER_C_COMMAND is a directory): set PROVIDER_C_COMMAND to the file",
    );
    expect(classifyRunFailure({ kind: 'spawn', errno: 'EMFILE' }).upstream).toEqual({
      errno: 'EMFILE',
      fix: expect.stringContaining('limits on processes and open files'),
    });
    expect(classifyRunFailure({ kind: 'line_too_long' })).toMatchObject({ code: 'upstream', retryable: false });
    expect(classifyRunFailure({ kind: 'timeout', idle: true })).toMatchObject({ code: 'timeout', retryable: false });
  });

  it("carries the CLI's own words, bounded and sanitized, for the log line only", () => {
    const error = classifyRunFailure({
      kind: 'error_result',
      report: { text: 'Not logged in · Please run /login', error: 'authentication_failed' },
      stderr: '',
    });
    expect(error).toMatchObject({ code: 'auth', upstreamMessage: 'Not logged in · Please run /login' });
    const crashed = exit('warming up\nfatal: key=sk-ant-oat01-AAAAAAAAAAAAAAAAAAAAAAAA\n');
    expect(crashed.upstreamMessage).toBe('fatal: key=[redacted]');
    expect(classifyRunFailure({ kind: 'timeout', idle: false }).upstreamMessage).toBeUndefined();
  });

  it('names the reset of a spent credit or usage limit', () => {
    const report = (fields: Partial<CliErrorReport>): GatewayError =>
      classifyRunFailure({ kind: 'error_result', report: { text: '', ...fields }, stderr: '' }, 1_000_000_000_000);
    const credit = report({ error: 'billing_error', resetsAt: 1_000_000_000 + 7200 });
    expect(credit).toMatchObject({ code: 'usage_credit_exhausted', resetsAt: (1_000_000_000 + 7200) * 1000 });
    expect(credit.retryAfterHeader).toBe(7200);
    expect(report({ error: 'billing_error' }).retryAfterHeader).toBe(3600);
    expect(report({ apiStatus: 429, apiError: 'usage_limit_reached', resetsAt: 1_000_000_000 + 60 }).resetsAt).toBe(
      (1_000_000_000 + 60) * 1000,
    );
  });

  it('keeps upstream text out of the error message and public message', () => {
    const error = exit('secret-ish stderr text: Invalid API key sk-ant-123');
    expect(error.message).not.toContain('sk-ant');
    expect(error.publicMessage).toBeUndefined();
  });
});

describe("the API's version gate (docs/error-codes.md)", () => {
  const refusal =
    'API Error: 400 Claude Code 2.1.275 does not support this model; version 2.1.280 or newer is required.';
  const report = (fields: Partial<CliErrorReport>): CliErrorReport => ({ text: '', ...fields });

  it('is model_requires_newer_client (400), never retried, naming `claude update` and the refused version', () => {
    const error = classifyRunFailure({
      kind: 'error_result',
      report: report({
        error: 'invalid_request',
        apiStatus: 400,
        apiErrorType: 'invalid_request_error',
        apiError: 'claude_code_version_too_old',
        cliVersion: '2.1.275',
      }),
      stderr: '',
    });
    expect(error).toMatchObject({ code: 'model_requires_newer_client', retryable: false, provider: 'provider_c' });
    expect(error.spec.status).toBe(400);
    expect(error.publicMessage).toContain('installed on the gateway (version 2.1.275) as too old');
    expect(error.publicMessage).toContain("run `claude update` on the gateway's machine");
  });

  it("is recognised by the API's words from a CLI that sets no api_error, or only prints them on stderr", () => {
    expect(
      classifyRunFailure({ kind: 'error_result', report: report({ apiStatus: 400, text: refusal }), stderr: '' }).code,
    ).toBe('model_requires_newer_client');
    expect(exit(refusal).code).toBe('model_requires_newer_client');
    expect(
      exit("Claude Code 2.1.275 is older than the minimum version required by your organization's policy").code,
    ).toBe('model_requires_newer_client');
    // The API's text never reaches the client: only the log line carries it.
    expect(exit(refusal).publicMessage).not.toContain('2.1.280');
  });

  it('names the version the startup probe found when the run printed none', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-version-gate-'));
    try {
      const claude = path.join(dir, 'claude');
      fs.writeFileSync(claude, '#!/bin/sh\necho "2.1.290 (Claude Code)"\n', { mode: 0o755 });
      await claudeCodeVersion(claude, { PATH: process.env.PATH ?? '' });
      expect(exit(refusal).publicMessage).toContain('(version 2.1.290)');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("Anthropic's third-party refusal (docs/error-codes.md extra_usage_required)", () => {
  const report = (text: string, fields: Partial<CliErrorReport> = {}): GatewayError =>
    classifyRunFailure({
      kind: 'error_result',
      report: { text, error: 'unknown', apiStatus: 400, apiErrorType: 'invalid_request_error', ...fields },
      stderr: '',
    });

  it.each([
    'API Error: 400 Third-party apps now draw from your extra usage, not your plan limits. Add more at claude.ai/settings/usage and keep going.',
    'API Error: 400 THIRD-PARTY APPS NOW DRAW FROM EXTRA USAGE, not plan limits. Ask your workspace admin to claim it and keep going.',
    "API Error: 400 You're out of extra usage. Add more at claude.ai/settings/usage and keep going.",
  ])('%j is extra_usage_required (403), never retried, for provider_c', (text) => {
    const error = report(text);
    expect(error).toMatchObject({ code: 'extra_usage_required', retryable: false, provider: 'provider_c' });
    expect(error.spec.status).toBe(403);
    expect(error.upstream?.message).toBe(text);
  });

  it('is recognised from stderr alone, as the last line the CLI printed', () => {
    const error = exit('API Error: 400 Third-party apps now draw from your extra usage, not your plan limits.');
    expect(error).toMatchObject({ code: 'extra_usage_required', retryable: false });
  });

  it('a 429 in those words is the plan limit, not the refusal', () => {
    expect(report("You're out of extra usage · resets 3pm", { error: 'rate_limit', apiStatus: 429 }).code).toBe(
      'rate_limited',
    );
    // The API's 429 alone says so, when the CLI's own field names no limit.
    const limited = report("You're out of extra usage · resets 3pm", {
      error: 'unknown',
      apiStatus: 429,
      apiErrorType: 'rate_limit_error',
    });
    expect(limited).toMatchObject({ code: 'rate_limited', retryable: false });
    expect(limited.spec.status).toBe(429);
    expect(limited.retryAfterHeader).toBe(60);
  });

  it('other 400s stay bad_request', () => {
    expect(report('API Error: 400 messages.0.content: field required').code).toBe('bad_request');
  });
});

describe("Anthropic's long-context refusal (docs/error-codes.md context_window)", () => {
  /** What Claude Code 2.1.332 reports (__fixtures__/claude-code-2.1.332/long-context-429.jsonl). */
  const CLI_TEXT =
    'API Error: Usage credits required for 1M context · turn on usage credits at https://claude.ai/settings/usage?from=cc_cli_limit_message (they take effect in a new session), or use --model to switch to standard context';
  const report = (fields: Partial<CliErrorReport> = {}): GatewayError =>
    classifyRunFailure(
      {
        kind: 'error_result',
        report: {
          text: CLI_TEXT,
          error: 'rate_limit',
          apiStatus: 429,
          apiErrorType: 'rate_limit_error',
          apiError: 'long_context_credits_required',
          subtype: 'success',
          terminalReason: 'api_error',
          cliVersion: '2.1.332',
          ...fields,
        },
        stderr: '',
      },
      1_000_000_000_000,
    );

  it('is context_window (400 context_length_exceeded), never retried, no Retry-After, for provider_c', () => {
    const error = report();
    expect(error).toMatchObject({
      code: 'context_window',
      retryable: false,
      provider: 'provider_c',
      upstreamStatus: 429,
    });
    expect(error.spec).toMatchObject({ status: 400, openaiCode: 'context_length_exceeded' });
    expect(error.retryAfterHeader).toBeUndefined();
    expect(error.detail).toBe(
      'error result (rate_limit, 429, rate_limit_error, long_context_credits_required, api_error)',
    );
  });

  it("says the 200,000-token rule of this login and every way out, in the gateway's words only", () => {
    const message = report().publicMessage!;
    // Clients that detect an overflow by the message (not its code) read these words.
    expect(message).toMatch(/exceeds the context window/i);
    expect(message).toContain('200,000 tokens');
    expect(message).toContain('Claude Code CLI login');
    expect(message).toMatch(/shorten or compact/);
    expect(message).toContain("Claude's extra usage");
    expect(message).toContain('claude.ai/settings/usage');
    expect(message).toContain('another model');
    expect(message).not.toMatch(/API Error|usage credits|--model|cc_cli_limit_message/);
  });

  it("carries the fix and the CLI's words, sanitized, for the log line only", () => {
    const error = report();
    expect(error.fix).toContain('claude.ai/settings/usage');
    expect(error.fix).toContain('200,000');
    expect(error.upstream).toEqual({
      type: 'rate_limit_error',
      code: 'long_context_credits_required',
      message: expect.stringContaining('Usage credits required for 1M context'),
    });
  });

  it("is recognised by the CLI's marker alone, whatever the text says", () => {
    expect(report({ text: '' }).code).toBe('context_window');
    expect(report({ text: 'misleading: please login' }).code).toBe('context_window');
  });

  it.each([
    // The API's own words, as an older CLI printed them, or in the newer wording the CLI knows.
    'API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"Extra usage is required for long context requests."}}',
    'API Error: Extra usage is required for 1M context · run /extra-usage to enable, or /model to switch to standard context',
    'Usage credits are required for long context requests.',
    CLI_TEXT,
  ])('is recognised by its words %j from a CLI that sets no marker, and from stderr alone', (text) => {
    expect(report({ apiError: undefined, text }).code).toBe('context_window');
    expect(report({ apiError: undefined, error: undefined, apiErrorType: undefined, text }).code).toBe(
      'context_window',
    );
    expect(exit(text)).toMatchObject({ code: 'context_window', retryable: false });
  });

  it('other 429s stay limits', () => {
    expect(report({ apiError: undefined, text: 'API Error: Server is temporarily limiting requests' }).code).toBe(
      'rate_limited',
    );
    expect(report({ apiError: 'usage_limit_reached', text: "You've hit your 5-hour limit" }).code).toBe('usage_limit');
  });
});

describe(parseRetryAfterSeconds.name, () => {
  const now = 1_767_225_600_000;
  it.each([
    ['rate limited, retry after 30', 30],
    ['retry after 2 minutes', 120],
    ['usage limit reached, resets in 3 hours', 10800],
    ['claude ai usage limit reached|1767229200', 3600],
    ['limit reached ∙ resets 1767225660', 60],
    // The short units.
    ['usage limit reached, resets in 5h', 18000],
    ['retry after 2hr', 7200],
    ['try again in 3m', 180],
    ['retry after 4 mins', 240],
    ['retry after 30 sec', 30],
    ['retry after 45s', 45],
  ])('%j → %d s', (text, seconds) => {
    expect(parseRetryAfterSeconds(text, now)).toBe(seconds);
  });

  it.each(['usage limit reached ∙ resets 3pm (europe/berlin)', 'rate limit', 'resets 1767225000'])(
    '%j has no usable hint',
    (text) => {
      expect(parseRetryAfterSeconds(text, now)).toBeUndefined();
    },
  );
});

describe('the upstream cause (log only)', () => {
  it("keeps the exit status and the CLI's last stderr line on GatewayError.upstream", () => {
    const failure = classifyRunFailure({
      kind: 'exit',
      code: 1,
      signal: null,
      stderr: 'warming up\nInvalid API key · Please run /login\n',
    });
    expect(failure.code).toBe('auth');
    expect(failure.upstream).toEqual({ exitCode: 1, exitSignal: null, message: 'Invalid API key · Please run /login' });
    expect(failure.detail).not.toContain('Invalid');
  });
});
