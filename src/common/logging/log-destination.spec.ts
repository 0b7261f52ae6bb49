import { spawnSync } from 'node:child_process';
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
