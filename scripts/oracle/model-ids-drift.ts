import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { ROOT } from './oracle-clis';
import type { Difference } from './shape-diff';

/*
 * The model ids a CLI release knows itself, compared between the pinned release and the newest
 * (docs/providers.md "Following the upstream CLIs"). The gateway's provider_b and provider_c
 * catalogs follow these lists; a request capture never shows a model the capture did not ask for,
 * so a release that adds, drops or renames a model, or changes its default, shows only here.
 */

const CLI_MODEL_IDS = path.join(ROOT, 'scripts', 'cli-model-ids.mjs');

/** What scripts/cli-model-ids.mjs prints of one CLI: its ids and, for the Gemini CLI, its default. */
export interface CliModelList {
  readonly version: string;
  readonly models: readonly (string | { readonly id: string })[];
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

const idsOf = (list: CliModelList) =>
  new Set(list.models.map((model) => (typeof model === 'string' ? model : model.id)));

/** The ids (and default model) of one CLI the newest release added, dropped or changed. */
export function diffModelLists(cli: string, pinned: CliModelList, newest: CliModelList): Difference[] {
  const where = `${cli} model list (${pinned.version} → ${newest.version})`;
  const before = idsOf(pinned);
  const after = idsOf(newest);
  const differences: Difference[] = [];
  for (const id of [...after].filter((entry) => !before.has(entry)).sort())
    differences.push({ where, change: 'added', key: `model ${id}`, fresh: [id] });
  for (const id of [...before].filter((entry) => !after.has(entry)).sort())
    differences.push({ where, change: 'removed', key: `model ${id}`, committed: [id] });
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
