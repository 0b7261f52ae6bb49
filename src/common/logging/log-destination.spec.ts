import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * LOG_FORMAT (docs/configuration.md): a JSON gateway never loads pino-pretty, so the readable
 * format costs a JSON deployment nothing, not even its memory. Checked in a fresh Node process,
 * whose module cache holds exactly what logDestination loaded.
 */
const ROOT = path.resolve(__dirname, '..', '..', '..');

function loadsPinoPretty(format: string, stdoutIsTerminal: boolean): boolean {
  const script = `
    const { logDestination } = require('./src/common/logging/log-destination');
    logDestination(${JSON.stringify(format)}, ${stdoutIsTerminal});
    const loaded = Object.keys(require.cache).some((file) => file.includes('/node_modules/pino-pretty/'));
    process.stderr.write(String(loaded));
  `;
  const result = spawnSync(process.execPath, ['-r', './scripts/register-ts.cjs', '-e', script], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(result.stderr);
  return result.stderr === 'true';
}

describe('logDestination', () => {
  it.each([
    ['json', false, false],
    ['json', true, false],
    ['auto', false, false],
    ['auto', true, true],
    ['pretty', false, true],
  ])('LOG_FORMAT=%s, stdout a terminal: %s, loads pino-pretty: %s', (format, terminal, loaded) => {
    expect(loadsPinoPretty(format, terminal)).toBe(loaded);
  });
});

describe('readable lines', () => {
  it('reach the terminal before what the process writes to stderr next, as a failed start does', () => {
    // stdout and stderr on one file, as on a terminal: the order the process wrote them in is kept.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'log-destination-'));
    const file = path.join(dir, 'terminal');
    const terminal = fs.openSync(file, 'w');
    try {
      const script = `
        const { logDestination } = require('./src/common/logging/log-destination');
        const stdout = logDestination('pretty', true);
        for (const msg of ['first line', 'last line'])
          stdout.write(JSON.stringify({ level: 50, time: 0, msg }) + '\\n');
        process.stderr.write('gateway: cannot start\\n');
      `;
      const result = spawnSync(process.execPath, ['-r', './scripts/register-ts.cjs', '-e', script], {
        cwd: ROOT,
        stdio: ['ignore', terminal, terminal],
      });
      expect(result.status).toBe(0);
      const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n');
      expect(lines.map((line) => line.replace(/^\[[^\]]*\] /, ''))).toEqual([
        'ERROR: first line',
        'ERROR: last line',
        'gateway: cannot start',
      ]);
    } finally {
      fs.closeSync(terminal);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
