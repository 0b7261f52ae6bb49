import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { REPO_ROOT } from './support/child-gateway';

/**
 * `npm test` runs scripts/install-test-tools.mjs first (README "npm test"): it installs the tools
 * the deployment tests run when it can, and otherwise stops with one message naming what to
 * install by hand.
 */
const SCRIPT = path.join(REPO_ROOT, 'scripts', 'install-test-tools.mjs');

/** Runs the script for the tools only: oracles/ has its own installer and specs. */
function runScript(env: NodeJS.ProcessEnv) {
  return spawnSync(process.execPath, [SCRIPT, '--no-oracles'], {
    cwd: REPO_ROOT,
    env,
    encoding: 'utf8',
    timeout: 300_000,
  });
}

describe('scripts/install-test-tools.mjs (npm test runs it first)', () => {
  it('stops with one message naming what to install by hand where apt-get is missing', () => {
    // A PATH with nothing on it: no promtool, no apt-get, no sudo, no kubectl, no npm.
    const emptyBin = fs.mkdtempSync(path.join(os.tmpdir(), 'no-tools-'));
    try {
      const result = runScript({ PATH: emptyBin, HOME: emptyBin });
      expect(result.status).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr.match(/npm test needs tools it cannot install here/g)).toHaveLength(1);
      expect(result.stderr).toContain('promtool (apt-get is not on PATH (not Debian or Ubuntu))');
      expect(result.stderr).toContain('`sudo apt-get install prometheus`');
      // The README commands docs-run runs need curl and openssl, which not every Debian image has.
      expect(result.stderr).toContain(
        'curl (apt-get is not on PATH (not Debian or Ubuntu)): `sudo apt-get install curl`',
      );
      expect(result.stderr).toContain(
        'openssl (apt-get is not on PATH (not Debian or Ubuntu)): `sudo apt-get install openssl`',
      );
      // Nothing was attempted: no "installing …" line precedes the message.
      expect(result.stderr).not.toMatch(/^installing /m);
    } finally {
      fs.rmSync(emptyBin, { recursive: true, force: true });
    }
  });

  it('succeeds quietly once the tools are installed (as pretest left them)', () => {
    const result = runScript({ ...process.env });
    expect(result.stderr).not.toContain('cannot install');
    expect(result.status).toBe(0);
  });
});
