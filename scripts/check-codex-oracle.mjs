// `npm run oracle:codex`: re-runs the pinned Codex CLI offline (scripts/capture-codex-oracle.mjs,
// inside the loopback-only namespace the npm script creates) and reports drift against the
// committed fixtures in test/fixtures/codex-oracle/: header names and versions, every body field by
// value (ids and clocks masked) of every request of each capture, the model list, the wire effort
// the CLI sends for each `model_reasoning_effort` setting, and the CLI version each fixture
// records. The fresh captures go to a scratch folder. Exit status 1 when anything drifted, 2 when
// it could not run.
//
//   --write     rewrite the effort table (codex-<version>.efforts.json) instead of comparing it
//   --capture   first capture every fixture again into test/fixtures/codex-oracle/ under the pinned
//               version's name — each run of CODEX_RUNS with its exact settings (the changed-list
//               runs with their ORACLE_MODELS_PATCH), the app-server run, the reduced model list —
//               then run the check against them and write the effort table (after a re-pin:
//               docs/providers.md, "Re-pinning and re-capturing"). Only with the pinned CLI installed.
//   (npm run oracle:codex -- --capture passes it on)
//
// The runs and the comparison are scripts/oracle/codex-check.ts, shared with `npm run oracle:drift`
// (docs/providers.md, "Following the upstream CLIs"); this file only points them at the pinned CLI.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// The shared check is TypeScript: load it through the project's require hook, as the other scripts do.
const require = createRequire(import.meta.url);
require('./register-ts.cjs');
const { checkCodex, CODEX_FIXTURES, CODEX_RUNS } = require('./oracle/codex-check.ts');
const { CODEX, lastLine, ORACLES_NODE_MODULES } = require('./oracle/oracle-clis.ts');
const {
  environmentWithoutOracleSettings,
  reportInstalledCheck,
  requirePinnedInstalled,
} = require('./oracle/pinned-check.ts');

const write = process.argv.includes('--write') || process.argv.includes('--capture');
process.exit(
  reportInstalledCheck(CODEX, 'npm run oracle:codex', (scratch) => {
    if (process.argv.includes('--capture')) captureAll();
    const check = checkCodex({ nodeModules: ORACLES_NODE_MODULES, scratch });
    if (!write) return check;
    const effortsFile = path.join(CODEX_FIXTURES, `codex-${check.ran}.efforts.json`);
    const table = {
      note: 'reasoning sent by the pinned CLI per model_reasoning_effort setting; written by scripts/check-codex-oracle.mjs --write',
      codex_version: check.ran,
      efforts: check.efforts,
    };
    fs.writeFileSync(effortsFile, JSON.stringify(table, null, 2) + '\n');
    process.stdout.write(`wrote ${path.relative(root, effortsFile)}\n`);
    return {
      ...check,
      differences: check.differences.filter((difference) => !difference.where.endsWith('.efforts.json')),
    };
  }),
);

/** Every capture of CODEX_RUNS, written over the pinned version's fixtures. */
function captureAll() {
  const pinned = requirePinnedInstalled(CODEX);
  const base = environmentWithoutOracleSettings();
  for (const run of CODEX_RUNS) {
    const out = path.join(CODEX_FIXTURES, `codex-${pinned}.${run.name}`);
    const capture = spawnSync(process.execPath, [path.join(root, 'scripts', 'capture-codex-oracle.mjs')], {
      env: { ...base, ...run.env, ORACLE_NODE_MODULES: ORACLES_NODE_MODULES, ORACLE_OUT: out },
      encoding: 'utf8',
    });
    if (capture.status !== 0)
      throw new Error(`the Codex capture ${run.name} failed (exit ${capture.status}): ${lastLine(capture.stderr)}`);
    process.stderr.write(capture.stdout);
  }
}
