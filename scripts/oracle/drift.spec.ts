import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { installPinned, INSTALL_ORACLES } from './drift';
import { EXIT_COULD_NOT_RUN } from './drift-report';
import { lastLine, ROOT } from './oracle-clis';

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

// A checkout where `npm test` never ran has no oracles/node_modules: oracle:drift installs the pinned
// CLIs itself, with the script `npm test` runs, and names that one command when it cannot.
describe('oracle:drift and the pinned CLIs', () => {
  let tmp: string;
  beforeEach(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'drift-pinned-'))));
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const installer = (body: string) => {
    const file = path.join(tmp, 'installer.mjs');
    fs.writeFileSync(file, body);
    return file;
  };

  it("installs them with npm test's own installer", () => {
    expect(path.relative(ROOT, INSTALL_ORACLES)).toBe(path.join('scripts', 'install-oracles.mjs'));
    const ran = path.join(tmp, 'ran');
    expect(() =>
      installPinned(installer(`import * as fs from 'node:fs'; fs.writeFileSync(${JSON.stringify(ran)}, 'yes');`)),
    ).not.toThrow();
    expect(fs.readFileSync(ran, 'utf8')).toBe('yes');
  });

  it('names the one command that installs them when the install fails', () => {
    let thrown: unknown;
    try {
      installPinned(installer('process.exit(3);'));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({
      message: expect.stringMatching(/^installing the pinned CLIs of oracles\/package\.json failed \(exit 3;/),
      fix: expect.stringMatching(/^run `node scripts\/install-oracles\.mjs`/),
    });
  });

  it("reports a crashed child by its error, not by Node's version line", () => {
    const crash = spawnSync(process.execPath, ['-e', 'throw new Error("the real reason")'], { encoding: 'utf8' });
    expect(crash.stderr.trim().split('\n').pop()).toMatch(/^Node\.js v\d/);
    expect(lastLine(crash.stderr)).toBe('Error: the real reason');
    expect(lastLine('npm error code E404\nnpm error 404 Not Found\n')).toBe('npm error 404 Not Found');
    expect(lastLine('')).toBe('(no output)');
  });
});
