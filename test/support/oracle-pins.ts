import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLAUDE_FIXTURES } from '../../scripts/oracle/claude-check';
import { CODEX_FIXTURES } from '../../scripts/oracle/codex-check';
import { recaptureCommand } from '../../scripts/oracle/drift-report';
import type { OraclePackage } from '../../scripts/oracle/oracle-clis';
import { CLAUDE_CODE, CODEX, GEMINI_CLI, pinnedVersion, ROOT } from '../../scripts/oracle/oracle-clis';

/**
 * The captures of the vendor CLIs the specs compare the gateway with, found by the pins of
 * oracles/package.json, and the pins themselves. A re-pin moves every spec to the new version's
 * captures at once: while they are not captured, a spec reading one fails with the command that
 * captures them, and while the gateway still claims the old version, src/providers/oracle-pins.spec.ts
 * fails naming the constant to move (docs/providers.md, "Re-pinning and re-capturing").
 */
export const CODEX_PIN = pinnedVersion(CODEX);
export const CLAUDE_CODE_PIN = pinnedVersion(CLAUDE_CODE);
export const GEMINI_CLI_PIN = pinnedVersion(GEMINI_CLI);

/** Where the re-pinning steps are written out. */
const PROCEDURE = 'docs/providers.md, "Re-pinning and re-capturing"';

/** `file`, a capture of the pinned `cli`; throws what to run when it has not been captured. */
export function pinnedCapture(cli: OraclePackage, file: string): string {
  if (!fs.existsSync(file)) {
    const pin = pinnedVersion(cli);
    throw new Error(
      `${path.relative(ROOT, file)} does not exist: oracles/package.json pins ${cli} ${pin}, whose captures were not taken. ` +
        `Capture them with ${recaptureCommand(cli, pin)} (${PROCEDURE}).`,
    );
  }
  return file;
}

/** test/fixtures/codex-oracle/codex-<pin>.<name>. */
export function codexCapturePath(name: string): string {
  return pinnedCapture(CODEX, path.join(CODEX_FIXTURES, `codex-${CODEX_PIN}.${name}`));
}

/** A Codex capture of the pinned CLI, parsed. */
export function readCodexCapture<T = Record<string, any>>(name: string): T {
  return JSON.parse(fs.readFileSync(codexCapturePath(name), 'utf8')) as T;
}

/** src/providers/provider-c/__fixtures__/claude-code-<pin>/<name>. */
export function claudeCapturePath(name: string): string {
  return pinnedCapture(CLAUDE_CODE, path.join(CLAUDE_FIXTURES, `claude-code-${CLAUDE_CODE_PIN}`, name));
}

/**
 * What is wrong with a version the gateway claims (`constant`, defined in `file`) for `cli`, or ''
 * when it is the pin: the gateway must send the version whose captures the specs compare it with.
 */
export function claimedVersionProblem(cli: OraclePackage, claimed: string, constant: string, file: string): string {
  const pin = pinnedVersion(cli);
  if (claimed === pin) return '';
  return (
    `${constant} (${file}) is ${claimed}, but oracles/package.json pins ${cli} ${pin}: ` +
    `set it to ${pin} once ${pin}'s captures are taken (${recaptureCommand(cli, pin)}) and the gateway follows them, ` +
    `or pin ${claimed} again (${PROCEDURE})`
  );
}
