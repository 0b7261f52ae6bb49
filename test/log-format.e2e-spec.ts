import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { SENTENCE_EVENTS } from '../src/common/logging/event-words';
import { REPO_ROOT } from './support/child-gateway';
import { WAIT_GUARD_MS } from './support/fake-provider-a';
import { completed, created, providerASettings, textDelta } from './support/provider-a-fixtures';
import { useFakeProviderA } from './support/provider-a-harness';
import { rawRequest } from './support/raw-http';

/**
 * LOG_FORMAT (docs/configuration.md): readable lines when stdout is a terminal, JSON lines
 * otherwise, either one forced by the setting; no secret, prompt or output in either format.
 * The terminal is a real pseudo-terminal: util-linux `script` runs the gateway on one.
 */
const BEARER = 'log-format-secret-7731';
const SECRETS = [BEARER, 'SECRET-PROMPT-TEXT', 'SECRET-OUTPUT-TEXT'];

describe('log format: readable at a terminal, JSON otherwise (docs/configuration.md LOG_FORMAT)', () => {
  const { fake, home } = useFakeProviderA({ homePrefix: 'log-format-e2e-' });
  const settings = () => ({
    GATEWAY_BEARER_SECRET: BEARER,
    GATEWAY_PROVIDERS: 'provider_a',
    ...providerASettings(fake(), path.join(home(), 'pa')),
  });

  /** One chat through the fake, carrying the bearer and a prompt that must never be logged. */
  async function chat(url: string): Promise<void> {
    fake().enqueue({ frames: [created(), textDelta('SECRET-OUTPUT-TEXT'), completed()] });
    const answer = await rawRequest(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${BEARER}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-5.6-sol', messages: [{ role: 'user', content: 'SECRET-PROMPT-TEXT' }] }),
    });
    expect(answer.status).toBe(200);
  }

  /**
   * Runs the gateway (on a pseudo-terminal, or into a pipe), sends one chat once it listens, and
   * returns everything its stdout showed up to the chat's access line (colours and carriage
   * returns removed).
   */
  async function logOf(extra: Record<string, string>, { terminal }: { terminal: boolean }): Promise<string> {
    const gatewayHome = fs.mkdtempSync(path.join(os.tmpdir(), 'log-format-home-'));
    const gateway = [process.execPath, '-r', './scripts/register-ts.cjs', 'src/main.ts'];
    const [command, ...args] = terminal
      ? ['script', '-qfec', `exec ${gateway.map((word) => `'${word}'`).join(' ')}`, '/dev/null']
      : gateway;
    const child = spawn(command, args, {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: gatewayHome,
        GATEWAY_HOST: '127.0.0.1',
        GATEWAY_PORT: '0',
        ...settings(),
        ...extra,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let shown = '';
    const text = () => stripVTControlCharacters(shown).replace(/\r/g, '');
    const waitFor = (pattern: RegExp) =>
      new Promise<RegExpExecArray>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`not shown: ${pattern}; stdout:\n${text()}`)),
          WAIT_GUARD_MS * 2,
        );
        const look = () => {
          const match = pattern.exec(text());
          if (!match) return;
          clearTimeout(timer);
          child.stdout.off('data', look);
          resolve(match);
        };
        child.stdout.on('data', look);
        look();
      });
    child.stdout.on('data', (chunk: Buffer) => (shown += chunk.toString('utf8')));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      // JSON's `"port":N`, or the readable line's `listening on HOST:N`.
      const [, jsonPort, readablePort] = await waitFor(/gateway_listening.*"port":(\d+)|listening on [\d.]+:(\d+)/);
      await chat(`http://127.0.0.1:${jsonPort ?? readablePort}`);
      await waitFor(/^(?=.*request completed)(?=.*(?:"path":"|req\.path=)\/v1\/chat\/completions).*$/m);
      return text();
    } finally {
      // On a terminal, script ends the session it started, and with it the gateway.
      child.kill('SIGTERM');
      await exited;
      fs.rmSync(gatewayHome, { recursive: true, force: true });
    }
  }

  const isJson = (line: string) => {
    try {
      return typeof JSON.parse(line) === 'object';
    } catch {
      return false;
    }
  };
  const logLines = (text: string) => text.split('\n').filter((line) => line.trim() !== '');

  it('at a terminal, writes one readable line per event: time, level, the words, then the fields they leave unsaid', async () => {
    // provider_c without its CLI: the lines that carry a fix sentence, and an event once logged by name only.
    const shown = await logOf(
      { GATEWAY_PROVIDERS: 'provider_a,provider_c', PROVIDER_C_COMMAND: 'claude-not-installed-here' },
      { terminal: true },
    );
    const lines = logLines(shown);
    expect(lines.filter(isJson)).toEqual([]);
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^\[[\d:.]+\] WARN: the Claude Code CLI \(claude-not-installed-here\) cannot be run \(command not found\): .* {2}event=provider_c_command_missing$/,
      ),
    );
    const fixed = lines.filter((line) => line.includes('npm install -g @anthropic-ai/claude-code'));
    expect(fixed.length).toBeGreaterThanOrEqual(3);
    for (const line of fixed) expect(line.split('npm install -g').length - 1).toBe(1);
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: listening on 127\.0\.0\.1:\d+, serving provider_a, provider_c {2}event=gateway_listening /,
      ),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^\[[\d:.]+\] INFO: request completed {2}reqId=\S+ req\.method=POST req\.path=\/v1\/chat\/completions /,
      ),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^\[[\d:.]+\] INFO: chat 200 on gpt-5\.6-sol {2}reqId=\S+ event=chat_completion provider=provider_a /,
      ),
    );
    // Each fact once: no record dumped as JSON, and no field's value said again on its line.
    for (const line of lines) {
      expect(line).toMatch(/^\[[\d:.]+\] [A-Z]+: /);
      expect(line).not.toContain('{"');
      const [words, fields = ''] = line.replace(/^\[[\d:.]+\] [A-Z]+: /, '').split('  ');
      for (const [, name, value] of fields.matchAll(/(?:^| )([\w.]+)=("[^"]*"|\S+)/g)) {
        if (/^(?:\d+|true|false|null)$/.test(value)) continue;
        expect({ line, name, count: line.split(value).length - 1 }).toEqual({ line, name, count: 1 });
        expect(words).not.toContain(value);
      }
    }
    for (const secret of SECRETS) expect(shown).not.toContain(secret);
  });

  it.each([
    ['at a terminal with LOG_FORMAT=json', { LOG_FORMAT: 'json' }, true],
    ['into a pipe', {}, false],
    ['into a pipe with LOG_FORMAT=auto', { LOG_FORMAT: 'auto' }, false],
  ])('%s, writes only JSON lines, secrets left out', async (_name, extra, terminal) => {
    const shown = await logOf(extra, { terminal });
    const lines = logLines(shown);
    expect(lines.length).toBeGreaterThan(2);
    expect(lines.filter((line) => !isJson(line))).toEqual([]);
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records).toContainEqual(
      expect.objectContaining({
        msg: 'request completed',
        req: expect.objectContaining({ path: '/v1/chat/completions' }),
      }),
    );
    // For machines the records stay as pino writes them: the event's name as `msg`, never the readable words.
    for (const record of records) {
      if (typeof record.event === 'string' && !SENTENCE_EVENTS.has(record.event)) expect(record.msg).toBe(record.event);
    }
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^\{"level":30,"time":\d+,"pid":\d+,"hostname":"[^"]*","context":"main","event":"gateway_listening","host":"127\.0\.0\.1","port":\d+,.*,"msg":"gateway_listening"\}$/,
      ),
    );
    for (const secret of SECRETS) expect(shown).not.toContain(secret);
  });

  it('into a pipe with LOG_FORMAT=pretty, writes readable lines', async () => {
    const shown = await logOf({ LOG_FORMAT: 'pretty' }, { terminal: false });
    expect(logLines(shown).filter(isJson)).toEqual([]);
    expect(shown).toMatch(/^\[[\d:.]+\] INFO: listening on 127\.0\.0\.1:\d+/m);
    for (const secret of SECRETS) expect(shown).not.toContain(secret);
  });
});
