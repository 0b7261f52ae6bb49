/**
 * `npm run oracle:claude`: re-runs the pinned Claude Code offline (inside the loopback-only
 * namespace the npm script creates) through scripts/oracle/claude-check.ts, the check
 * `npm run oracle:drift` runs on the newest release, and reports drift against the committed
 * fixtures of the pin (src/providers/provider-c/__fixtures__/claude-code-<pin>/): per case the
 * stream-json event kinds and fields, and the `claude auth status --json` answers. The fresh
 * captures go to a scratch folder; the committed fixtures are not written. Exit status 1 when
 * anything drifted, 2 when it could not run.
 *
 *   --capture   first capture every case and the auth status answers again into the pinned
 *               version's fixture folder, then check them (after a re-pin: docs/providers.md,
 *               "Re-pinning and re-capturing"). Only with the pinned CLI installed.
 *   (npm run oracle:claude -- --capture passes it on)
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLAUDE_FIXTURES, checkClaude } from './oracle/claude-check';
import { CLAUDE_CODE, lastLine, ORACLES_NODE_MODULES, ROOT } from './oracle/oracle-clis';
import { environmentWithoutOracleSettings, reportInstalledCheck, requirePinnedInstalled } from './oracle/pinned-check';

/** Every case and the auth status answers, written over the pinned version's fixtures. */
function captureAll(): void {
  const pinned = requirePinnedInstalled(CLAUDE_CODE);
  const dir = path.join(CLAUDE_FIXTURES, `claude-code-${pinned}`);
  fs.mkdirSync(dir, { recursive: true });
  const env = { ...environmentWithoutOracleSettings(), ORACLE_NODE_MODULES: ORACLES_NODE_MODULES };
  for (const [script, nodeArgs, more] of [
    ['scripts/capture-provider-c-fixtures.ts', ['-r', './scripts/register-ts.cjs'], { ORACLE_OUT_DIR: dir }],
    ['scripts/capture-claude-auth-status.mjs', [], { ORACLE_OUT: path.join(dir, 'auth-status.json') }],
  ] as const) {
    const capture = spawnSync(process.execPath, [...nodeArgs, path.join(ROOT, script)], {
      cwd: ROOT,
      env: { ...env, ...more },
      encoding: 'utf8',
    });
    if (capture.status !== 0) throw new Error(`${script} failed (exit ${capture.status}): ${lastLine(capture.stderr)}`);
    process.stderr.write(capture.stdout);
  }
  process.stderr.write(`captured into ${path.relative(ROOT, dir)}\n`);
}

function main(): number {
  return reportInstalledCheck(CLAUDE_CODE, 'npm run oracle:claude', (scratch) => {
    if (process.argv.includes('--capture')) captureAll();
    return checkClaude({ nodeModules: ORACLES_NODE_MODULES, scratch });
  });
}

process.exit(main());
