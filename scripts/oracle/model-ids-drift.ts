import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { ROOT } from './oracle-clis';
import type { Difference } from './shape-diff';

/*
 * The model ids a CLI release knows itself, compared between the pinned release and the newest
 * (docs/providers.md "Following the upstream CLIs"). The gateway's provider_b and provider_c
 * catalogs follow these lists; a request capture never shows a model the capture did not ask for,
 * so a release that adds, drops or renames a model, changes its default, or (Claude Code) changes
 * the context window or output limit its table gives a model, shows only here.
 */

const CLI_MODEL_IDS = path.join(ROOT, 'scripts', 'cli-model-ids.mjs');

/** The limits Claude Code's model table gives a model (scripts/cli-model-ids.mjs), compared by value. */
const LIMITS = ['context_window', 'max_output_tokens', 'max_output_tokens_upper'] as const;

/** A model of the table with what it says of the model (Claude Code); the Gemini CLI lists bare ids. */
export interface CliModelRecord extends Partial<Record<(typeof LIMITS)[number], number>> {
  readonly id: string;
}

/** What scripts/cli-model-ids.mjs prints of one CLI: its ids and, for the Gemini CLI, its default. */
export interface CliModelList {
  readonly version: string;
  readonly models: readonly (string | CliModelRecord)[];
  readonly default_model?: string;
}

export type CliModelLists = Readonly<Record<'gemini-cli' | 'claude-code', CliModelList>>;

/** The lists of the CLIs installed under `oracles` (a folder holding `node_modules`). */
export function readCliModelLists(oracles: string): CliModelLists {
  const output = execFileSync(process.execPath, [CLI_MODEL_IDS, '--oracles', oracles], {
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(output) as CliModelLists;
}

const recordsOf = (list: CliModelList) =>
  new Map<string, CliModelRecord>(
    list.models.map((model) => (typeof model === 'string' ? [model, { id: model }] : [model.id, model])),
  );

/** The ids, limits and default model of one CLI the newest release added, dropped or changed. */
export function diffModelLists(cli: string, pinned: CliModelList, newest: CliModelList): Difference[] {
  const where = `${cli} model list (${pinned.version} → ${newest.version})`;
  const before = recordsOf(pinned);
  const after = recordsOf(newest);
  const differences: Difference[] = [];
  for (const id of [...after.keys()].filter((entry) => !before.has(entry)).sort())
    differences.push({ where, change: 'added', key: `model ${id}`, fresh: [id] });
  for (const id of [...before.keys()].filter((entry) => !after.has(entry)).sort())
    differences.push({ where, change: 'removed', key: `model ${id}`, committed: [id] });
  // The limits of a model both releases know; a model added or dropped is named above.
  for (const id of [...before.keys()].filter((entry) => after.has(entry)).sort()) {
    for (const limit of LIMITS) {
      const [was, is] = [before.get(id)?.[limit], after.get(id)?.[limit]];
      if (was === is) continue;
      const key = `model ${id} ${limit}`;
      if (was === undefined) differences.push({ where, change: 'added', key, fresh: [String(is)] });
      else if (is === undefined) differences.push({ where, change: 'removed', key, committed: [String(was)] });
      else differences.push({ where, change: 'changed', key, committed: [String(was)], fresh: [String(is)] });
    }
  }
  if (pinned.default_model !== newest.default_model)
    differences.push({
      where,
      change: 'changed',
      key: 'default model',
      committed: [String(pinned.default_model)],
      fresh: [String(newest.default_model)],
    });
  return differences;
}
