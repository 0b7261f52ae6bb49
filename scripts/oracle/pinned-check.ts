/**
 * What `npm run oracle:codex` and `npm run oracle:claude` share: capturing only with the pinned CLI
 * installed, and running one check of the installed CLI into the drift report with its exit code.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { CliDrift } from './drift-report';
import { driftExitCode, formatDrift } from './drift-report';
import type { OraclePackage } from './oracle-clis';
import { installedVersion, ORACLES_NODE_MODULES, pinnedVersion } from './oracle-clis';
import type { Difference } from './shape-diff';

/**
 * The pinned version of `cli`, once it is the one installed: captures of another version would be
 * filed under the pin's name.
 */
export function requirePinnedInstalled(cli: OraclePackage): string {
  const pinned = pinnedVersion(cli);
  const installed = installedVersion(ORACLES_NODE_MODULES, cli);
  if (installed !== pinned)
    throw new Error(
      `oracles/node_modules holds ${cli} ${installed}, but oracles/package.json pins ${pinned}: the captures would be of the wrong CLI`,
    );
  return pinned;
}

/** This process's environment without ORACLE_* variables, which left in a shell would change a capture. */
export function environmentWithoutOracleSettings(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('ORACLE_')));
}

/** What a check of the installed CLI found. */
export interface InstalledCheck {
  readonly pinned: string;
  readonly ran: string;
  readonly differences: readonly Difference[];
}

/**
 * Runs `check` on a scratch folder removed afterwards, prints the drift report of the installed
 * CLI (or why it could not run, with the fix) and returns the exit status: 0 no drift, 1 drift, 2
 * could not run. `npmScript` names the command the fix repeats.
 */
export function reportInstalledCheck(
  cli: OraclePackage,
  npmScript: string,
  check: (scratch: string) => InstalledCheck,
): number {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'oracle-check-'));
  let result: CliDrift;
  try {
    const found = check(scratch);
    result = { cli, pinned: found.pinned, newest: found.ran, differences: found.differences };
  } catch (error) {
    result = {
      cli,
      pinned: '?',
      newest: '?',
      failure: {
        reason: error instanceof Error ? error.message : String(error),
        fix: `run \`node scripts/install-oracles.mjs\`, then this inside \`unshare -n\` as \`${npmScript}\` does`,
      },
    };
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  process.stdout.write(formatDrift([result], 'installed'));
  return driftExitCode([result]);
}
