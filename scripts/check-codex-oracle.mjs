// `npm run oracle:codex`: re-runs the pinned Codex CLI offline (scripts/capture-codex-oracle.mjs,
// inside the loopback-only namespace the npm script creates) and reports drift against the
// committed fixtures in test/fixtures/codex-oracle/: header names and versions, body keys and JSON
// types of every request of each capture, the model list, and the wire effort the CLI sends for
// each `model_reasoning_effort` setting. Exit status 1 when anything drifted, 2 when it could not run.
//
//   --write   rewrite the effort table (codex-<version>.efforts.json) instead of comparing it
//
// The runs and the comparison are scripts/oracle/codex-check.ts, shared with `npm run oracle:drift`
// (docs/providers.md, "Following the upstream CLIs"); this file only points them at the pinned CLI.
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// The shared check is TypeScript: load it through the project's require hook, as the other scripts do.
const require = createRequire(import.meta.url);
require('./register-ts.cjs');
const { checkCodex, CODEX_FIXTURES } = require('./oracle/codex-check.ts');
const { driftExitCode, formatDrift } = require('./oracle/drift-report.ts');
const { ORACLES_NODE_MODULES } = require('./oracle/oracle-clis.ts');

const write = process.argv.includes('--write');
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'codex-oracle-check-'));
let result;
try {
  const check = checkCodex({ nodeModules: ORACLES_NODE_MODULES, scratch });
  let differences = check.differences;
  if (write) {
    const effortsFile = path.join(CODEX_FIXTURES, `codex-${check.ran}.efforts.json`);
    const table = {
      note: 'reasoning sent by the pinned CLI per model_reasoning_effort setting; written by scripts/check-codex-oracle.mjs --write',
      codex_version: check.ran,
      efforts: check.efforts,
    };
    fs.writeFileSync(effortsFile, JSON.stringify(table, null, 2) + '\n');
    process.stdout.write(`wrote ${path.relative(root, effortsFile)}\n`);
    differences = differences.filter((difference) => !difference.where.endsWith('.efforts.json'));
  }
  result = { cli: '@openai/codex', pinned: check.pinned, newest: check.ran, differences };
} catch (error) {
  result = {
    cli: '@openai/codex',
    pinned: '?',
    newest: '?',
    failure: {
      reason: error instanceof Error ? error.message : String(error),
      fix: 'run `node scripts/install-oracles.mjs`, then this inside `unshare -n` as `npm run oracle:codex` does',
    },
  };
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}
process.stdout.write(formatDrift([result], 'installed'));
process.exit(driftExitCode([result]));
