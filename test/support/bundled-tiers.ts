import * as fs from 'node:fs';
import * as path from 'node:path';

interface Row {
  readonly id: string;
  readonly provider: string;
  readonly upstream_model: string;
  readonly reasoning_effort: string | null;
}

const BUNDLED = (
  JSON.parse(fs.readFileSync(path.join(__dirname, '../../src/models/catalog.json'), 'utf8')) as { models: Row[] }
).models;

/**
 * The model a tier alias means while no live list is held: the first provider_a model of that
 * tier in the bundled catalog (docs/chat.md "Model ids"). Read from the file, so a catalog refresh
 * needs no test edit.
 */
export function bundledTierModel(tier: 'sol' | 'terra' | 'luna'): { model: string; effort: string | null } {
  const model = BUNDLED.find(
    (row) => row.provider === 'provider_a' && row.upstream_model.endsWith(`-${tier}`),
  )!.upstream_model;
  return { model, effort: BUNDLED.find((row) => row.id === model)!.reasoning_effort };
}
