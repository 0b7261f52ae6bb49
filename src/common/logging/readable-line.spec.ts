import { prettyFactory } from 'pino-pretty';
import { READABLE_OPTIONS } from './readable-line';

/** pino-pretty with the gateway's options, over one JSON record as pino writes it; colours off. */
const line = (record: Record<string, unknown>): string =>
  prettyFactory({ ...READABLE_OPTIONS, colorize: false })(
    JSON.stringify({ level: 30, time: Date.UTC(2030, 0, 1, 12, 0, 0), pid: 4242, hostname: 'box', ...record }),
  );
/** How often `text` occurs in `within`. */
const count = (within: string, text: string) => within.split(text).length - 1;

describe('readable lines (LOG_FORMAT=pretty)', () => {
  it('writes an event as time, level, its words with its fields in place, then the rest once, on one line', () => {
    const shown = line({
      event: 'gateway_listening',
      host: '127.0.0.1',
      port: 8080,
      providers: ['provider_a', 'provider_c'],
      structured: false,
      metrics: true,
      max_semi_space_mib: null,
      msg: 'gateway_listening',
    });
    expect(shown).toMatch(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: listening on 127\.0\.0\.1:8080, serving provider_a, provider_c {2}event=gateway_listening structured=false metrics=true max_semi_space_mib=null\n$/,
    );
    expect(count(shown, 'gateway_listening')).toBe(1);
    expect(shown).not.toContain('4242');
    expect(shown).not.toContain('{"');
  });

  it('gives words to an event logged by name only', () => {
    const shown = line({
      level: 40,
      event: 'provider_c_command_missing',
      command: 'claude',
      reason: 'command not found',
      fix: 'install it (`npm install -g @anthropic-ai/claude-code`) or set PROVIDER_C_COMMAND to its path',
      msg: 'provider_c_command_missing',
    });
    expect(shown).toContain('WARN: the Claude Code CLI (claude) cannot be run (command not found): install it');
    expect(count(shown, 'provider_c_command_missing')).toBe(1);
    expect(count(shown, 'PROVIDER_C_COMMAND')).toBe(1);
    expect(shown).not.toContain('command=');
    expect(shown).not.toContain('fix=');
    expect(shown).not.toContain('reason=');
  });

  it('keeps a sentence as it is and drops the fields it already says: the fix once, the event once', () => {
    const fix = "run `codex login` on the gateway's machine";
    const shown = line({
      event: 'login_state',
      provider: 'provider_a',
      account: 'default',
      state: 'missing',
      reason: 'no login file',
      fix,
      msg: `provider_a login "default" (Codex CLI): missing (no login file); to fix: ${fix}`,
    });
    expect(shown).toBe(
      `[${shown.slice(1, 13)}] INFO: provider_a login "default" (Codex CLI): missing (no login file); to fix: ${fix}  event=login_state\n`,
    );
    // A snake_case value the sentence says in words is not repeated either.
    const missingCli = line({
      event: 'login_state',
      state: 'cli_missing',
      msg: 'provider_c login "default" (Claude Code CLI): cli missing (command not found)',
    });
    expect(missingCli).not.toContain('state=');
  });

  it('writes the fields a message leaves unsaid as name=value, nested ones by path, quoted when they need it', () => {
    const shown = line({
      reqId: 'req-1',
      req: { id: 'req-1', method: 'POST', path: '/v1/chat/completions' },
      res: { statusCode: 200 },
      responseTime: 12,
      msg: 'request completed',
    });
    expect(shown).toContain(
      'INFO: request completed  reqId=req-1 req.method=POST req.path=/v1/chat/completions res.statusCode=200 responseTime=12',
    );
    expect(
      line({
        level: 40,
        event: 'semi_space_unbounded',
        flag: '--max-semi-space-size=8',
        fix: 'set it',
        msg: 'semi_space_unbounded',
      }),
    ).toContain(
      'WARN: node was started without --max-semi-space-size=8, so V8\'s young generation is not bounded  event=semi_space_unbounded fix="set it"',
    );
  });

  it('writes an error as its type and message, on the same line', () => {
    const shown = line({
      level: 50,
      event: 'unhandled_error',
      err: { type: 'TypeError', message: 'x is not a function', stack: 'TypeError: x is not a function\n    at y' },
      msg: 'unhandled_error',
    });
    expect(shown).toMatch(
      /ERROR: a request failed on a bug in the gateway {2}event=unhandled_error err="TypeError: x is not a function"\n$/,
    );
    expect(count(shown, '\n')).toBe(1);
  });

  it('keeps a one-character field even when the message holds that letter as a word', () => {
    expect(line({ account: 'a', msg: 'switched to a new login' })).toMatch(
      /INFO: switched to a new login {2}account=a\n$/,
    );
  });

  it('leaves a list of records beside a sentence to the JSON lines', () => {
    const shown = line({ models: [{ id: 'gpt-5.6-sol' }], count: 1, msg: 'model catalog loaded' });
    expect(shown).toMatch(/INFO: model catalog loaded {2}count=1\n$/);
  });

  it("does not repeat Nest's context among the fields", () => {
    expect(line({ context: 'NestApplication', msg: 'Nest application successfully started' })).toMatch(
      /INFO: Nest application successfully started\n$/,
    );
  });

  it('shows the name of an event it has no words for, once', () => {
    expect(line({ event: 'made_up_event', n: 1, msg: 'made_up_event' })).toMatch(/INFO: made_up_event {2}n=1\n$/);
  });
});
