import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { EXIT_COULD_NOT_RUN } from './drift-report';
import { ROOT } from './oracle-clis';

// `npm run oracle:drift` when it cannot reach npm at all (docs/providers.md, "Following the
// upstream CLIs"): one line with the reason and the fix, exit 2, and no temporary folder left.
describe('oracle:drift without npm', () => {
  it('exits 2 with a one-line reason and fix, and removes its temporary folder', () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'drift-spec-'));
    try {
      const run = spawnSync(
        process.execPath,
        ['-r', path.join(ROOT, 'scripts', 'register-ts.cjs'), path.join(__dirname, 'drift.ts')],
        // No npm on PATH: the registry question fails before anything is installed or run.
        { cwd: ROOT, env: { PATH: tmp, TMPDIR: tmp }, encoding: 'utf8' },
      );
      expect(run.status).toBe(EXIT_COULD_NOT_RUN);
      const lines = run.stdout.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^oracle:drift could not run: npm view @openai\/codex version failed \(.*ENOENT.*\)\. Fix: make the npm registry reachable/,
      );
      expect(fs.readdirSync(tmp).filter((name) => name.startsWith('oracle-drift-'))).toEqual([]);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
