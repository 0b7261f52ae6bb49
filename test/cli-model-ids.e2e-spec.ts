import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The bundled provider_b and provider_c ids keep up with the pinned CLIs (docs/providers.md
 * "Where the provider_b and provider_c lists come from"): scripts/cli-model-ids.mjs reads
 * what the installed oracles know, and the catalog must serve it.
 */
const ROOT = path.join(__dirname, '..');

interface CliModels {
  'gemini-cli': { version: string; models: string[] };
  'claude-code': { version: string; models: Array<{ id: string; family: string }> };
}
interface Row {
  readonly id: string;
  readonly provider: string;
  readonly upstream_model: string;
}

const catalog = (JSON.parse(fs.readFileSync(path.join(ROOT, 'src/models/catalog.json'), 'utf8')) as { models: Row[] })
  .models;
const pins = (
  JSON.parse(fs.readFileSync(path.join(ROOT, 'oracles/package.json'), 'utf8')) as {
    devDependencies: Record<string, string>;
  }
).devDependencies;
/** The catalog ids and upstream models of a family (`gemini-3.5-flash` is an id sent as the CLI sends it). */
const served = (provider: string) =>
  new Set(catalog.filter((row) => row.provider === provider).flatMap((row) => [row.id, row.upstream_model]));

/** `claude-opus-5-5` → [5, 5]; `claude-3-7-sonnet` → [3, 7]: the version numbers in the id. */
const versionOf = (id: string) => (id.match(/\d+/g) ?? []).map(Number);
const newer = (left: string, right: string) => {
  const [a, b] = [versionOf(left), versionOf(right)];
  for (let index = 0; index < Math.max(a.length, b.length); index++) {
    if ((a[index] ?? 0) !== (b[index] ?? 0)) return (a[index] ?? 0) > (b[index] ?? 0);
  }
  return false;
};

describe('the bundled provider_b and provider_c ids against the pinned CLIs', () => {
  let cli: CliModels;
  beforeAll(() => {
    cli = JSON.parse(
      execFileSync(process.execPath, [path.join(ROOT, 'scripts/cli-model-ids.mjs')], {
        encoding: 'utf8',
        timeout: 120_000,
      }),
    ) as CliModels;
  });

  it('reads the pinned versions of oracles/package.json', () => {
    expect(cli['gemini-cli'].version).toBe(pins['@google/gemini-cli']);
    expect(cli['claude-code'].version).toBe(pins['@anthropic-ai/claude-code']);
    expect(cli['gemini-cli'].models).toContain('gemini-2.5-pro');
  });

  it('serves every Gemini model id the Gemini CLI accepts for a Google login', () => {
    // `-customtools` is the CLI's variant for Gemini API keys only; `gemma-…` ids sit behind its
    // experimental Gemma flag. Neither is a Code Assist model for a Google login.
    const expected = cli['gemini-cli'].models.filter((id) => id.startsWith('gemini-') && !id.endsWith('-customtools'));
    expect(expected.length).toBeGreaterThanOrEqual(5);
    expect(expected.filter((id) => !served('provider_b').has(id))).toEqual([]);
  });

  it('serves the newest Claude model of every family the catalog has an alias for (sonnet, opus, …)', () => {
    const families = catalog
      .filter((row) => row.provider === 'provider_c' && row.id === row.upstream_model && !row.id.startsWith('claude-'))
      .map((row) => row.id);
    expect(families).toEqual(expect.arrayContaining(['sonnet', 'opus', 'haiku']));
    const newest = families.map((family) =>
      cli['claude-code'].models
        .filter((model) => model.family === family)
        .map((model) => model.id)
        .reduce((best, id) => (newer(id, best) ? id : best)),
    );
    expect(newest.filter((id) => !served('provider_c').has(id))).toEqual([]);
  });
});
