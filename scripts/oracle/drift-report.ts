/**
 * How the oracle checks print their differences and what they exit with (docs/providers.md,
 * "Following the upstream CLIs"). A difference found in many requests (a version in every
 * user-agent) is printed once, followed by where it was seen, so that a new release reads as the
 * handful of things it changed rather than hundreds of lines.
 */
import * as path from 'node:path';
import { CLAUDE_CODE, CODEX, GEMINI_CLI, ROOT } from './oracle-clis';
import type { Difference } from './shape-diff';

/** Where the steps below are written out. */
const PROCEDURE = 'docs/providers.md, "Re-pinning and re-capturing"';

/**
 * The command that captures every fixture of `cli` again with the CLI installed in oracles/ (its
 * pin), offline, under the name of `version`, the pinned version.
 */
export function recaptureCommand(cli: string, version: string): string {
  switch (cli) {
    case CODEX:
      return '`npm run oracle:codex -- --capture`';
    case CLAUDE_CODE:
      return '`npm run oracle:claude -- --capture`';
    case GEMINI_CLI:
      return `\`unshare -n sh -c 'ip link set lo up; node -r ./scripts/register-ts.cjs scripts/oracle/capture-gemini-cli.ts src/providers/provider-b/__fixtures__/gemini-cli-${version}.capture.json'\``;
    default:
      return `the capture script of ${cli} (${PROCEDURE})`;
  }
}

/** Moving the pin of `cli` to `version`: the manifest, its lock, and the install into oracles/node_modules. */
export function repinCommand(cli: string, version: string): string {
  return `set "${cli}": "${version}" in oracles/package.json, run \`(cd oracles && npm install --package-lock-only --ignore-scripts) && node scripts/install-oracles.mjs\``;
}

/** What one CLI's check found, or why it could not run. */
export interface CliDrift {
  readonly cli: string;
  readonly pinned: string;
  /** The version that ran (the newest release for oracle:drift, the pin for the per-CLI checks). */
  readonly newest: string;
  readonly differences?: readonly Difference[];
  readonly failure?: { readonly reason: string; readonly fix: string };
}

export const EXIT_NO_DRIFT = 0;
export const EXIT_DRIFT = 1;
export const EXIT_COULD_NOT_RUN = 2;

/** 2 when any check could not run (the answer is incomplete), else 1 on any difference, else 0. */
export function driftExitCode(results: readonly CliDrift[]): number {
  if (results.some((result) => result.failure)) return EXIT_COULD_NOT_RUN;
  if (results.some((result) => (result.differences?.length ?? 0) > 0)) return EXIT_DRIFT;
  return EXIT_NO_DRIFT;
}

/**
 * The whole report: per CLI a heading line, then its differences. `ranLabel` names the version
 * that ran: `newest` for oracle:drift, `installed` for the checks of the pinned CLIs.
 */
export function formatDrift(results: readonly CliDrift[], ranLabel: 'newest' | 'installed' = 'newest'): string {
  const lines: string[] = [];
  for (const result of results) {
    const heading = `${result.cli}: pinned ${result.pinned}, ${ranLabel} ${result.newest}`;
    if (result.failure) {
      lines.push(`${heading}: could not run: ${result.failure.reason}. Fix: ${result.failure.fix}`);
      continue;
    }
    const differences = result.differences ?? [];
    const same = ranLabel === 'newest' && result.pinned === result.newest ? ' (same version, compared anyway)' : '';
    lines.push(
      differences.length === 0
        ? `${heading}: no drift${same}`
        : `${heading}: ${groupCount(differences)} difference(s), seen ${differences.length} time(s)${same}`,
    );
    lines.push(...formatDifferences(differences).map((line) => `  ${line}`));
  }
  lines.push(summary(results, ranLabel));
  return `${lines.join('\n')}\n`;
}

/** The last line: the verdict and, on drift, what to run for each CLI that drifted. */
function summary(results: readonly CliDrift[], ranLabel: 'newest' | 'installed'): string {
  const code = driftExitCode(results);
  if (code === EXIT_NO_DRIFT) return 'no drift: every CLI still matches its pinned fixtures';
  if (code === EXIT_COULD_NOT_RUN) return 'incomplete: fix what could not run and run it again';
  const steps = results
    .filter((result) => (result.differences?.length ?? 0) > 0)
    .map((result) => `${result.cli}: ${driftFix(result, ranLabel)}`);
  return `drift (${PROCEDURE}): ${steps.join('; ')}`;
}

/**
 * What to do about one CLI's drift. A newer release is followed by re-pinning and re-capturing; a
 * pinned CLI that no longer matches its own fixtures means a fixture, a fake or a capture script
 * changed; a check that ran another version than the pin ran on a stale oracles/ install.
 */
function driftFix(result: CliDrift, ranLabel: 'newest' | 'installed'): string {
  const recapture = recaptureCommand(result.cli, result.pinned);
  if (result.newest === result.pinned)
    return `the pinned CLI no longer prints or sends what its committed fixtures say; if a fixture, a fake or a capture script was changed on purpose, capture again with ${recapture} and review \`git diff\`, else undo that change`;
  if (ranLabel === 'installed')
    return `oracles/node_modules holds ${result.newest}, not the pinned ${result.pinned}: run \`node scripts/install-oracles.mjs\`, then this check again`;
  return `to follow ${result.newest}, ${repinCommand(result.cli, result.newest)}, then capture with ${recaptureCommand(result.cli, result.newest)} and move the version the gateway claims (the specs name it)`;
}

/**
 * One line per distinct change (`+` added, `-` removed, `~` changed, then the key and values),
 * followed by one `in <source>: …` line per capture it was seen in.
 */
export function formatDifferences(differences: readonly Difference[]): string[] {
  const groups = new Map<string, Difference[]>();
  for (const difference of differences) {
    const line = changeLine(difference);
    groups.set(line, [...(groups.get(line) ?? []), difference]);
  }
  const lines: string[] = [];
  for (const [line, members] of groups) {
    lines.push(line);
    const bySource = new Map<string, string[]>();
    for (const { where } of members) {
      const [source, ...item] = where.split(' · ');
      bySource.set(source, [...(bySource.get(source) ?? []), ...(item.length > 0 ? [item.join(' · ')] : [])]);
    }
    for (const [source, items] of bySource)
      lines.push(`    in ${source}${items.length > 0 ? `: ${items.join('; ')}` : ''}`);
  }
  return lines;
}

function groupCount(differences: readonly Difference[]): number {
  return new Set(differences.map(changeLine)).size;
}

function changeLine(difference: Difference): string {
  const values = (list: readonly string[] | undefined): string => (list ?? []).join(' | ');
  switch (difference.change) {
    case 'added':
      return `+ ${difference.key}: ${values(difference.fresh)}`;
    case 'removed':
      return `- ${difference.key}: ${values(difference.committed)}`;
    case 'changed':
      return `~ ${difference.key}: ${values(difference.committed)} → ${values(difference.fresh)}`;
  }
}

/** The difference a fixture missing for the pinned version makes (it is captured with the pinned CLI). */
export function missingFixture(file: string): Difference {
  return {
    where: path.relative(ROOT, file),
    change: 'removed',
    key: 'fixture',
    committed: ['(no committed fixture for the pinned version: capture it, docs/providers.md)'],
  };
}
