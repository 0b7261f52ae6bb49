/**
 * How the oracle checks print their differences and what they exit with (docs/providers.md,
 * "Following the upstream CLIs"). A difference found in many requests (a version in every
 * user-agent) is printed once, followed by where it was seen, so that a new release reads as the
 * handful of things it changed rather than hundreds of lines.
 */
import * as path from 'node:path';
import { ROOT } from './oracle-clis';
import type { Difference } from './shape-diff';

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
  const code = driftExitCode(results);
  lines.push(
    code === EXIT_NO_DRIFT
      ? 'no drift: every CLI still matches its pinned fixtures'
      : code === EXIT_DRIFT
        ? 'drift: re-pin and re-capture as docs/providers.md ("Following the upstream CLIs") says'
        : 'incomplete: fix what could not run and run it again',
  );
  return `${lines.join('\n')}\n`;
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
