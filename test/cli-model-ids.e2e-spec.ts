import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { familyOf } from '../src/core/family-registry';
import { upstreamShaped } from '../src/models/variant-hint';
import { cliModelList } from './support/fake-provider-a';
import { useGateway } from './support/create-test-app';
import { postChatBody } from './support/chat-sse';

/**
 * The bundled provider_b and provider_c ids keep up with the pinned CLIs (docs/providers.md
 * "Where the provider_b and provider_c lists come from"): scripts/cli-model-ids.mjs reads
 * what the installed oracles know, and the catalog must serve it.
 */
const ROOT = path.join(__dirname, '..');

/** A record of Claude Code's model table with the limits it gives the model (scripts/cli-model-ids.mjs). */
interface ClaudeRecord {
  readonly id: string;
  readonly family: string;
  readonly first_party_id?: string;
  readonly context_window?: number;
  readonly max_output_tokens?: number;
}
interface CliModels {
  'gemini-cli': { version: string; models: string[]; aliases: string[] };
  'claude-code': { version: string; models: ClaudeRecord[]; aliases: string[] };
}
interface Row {
  readonly id: string;
  readonly provider: string;
  readonly upstream_model: string;
  readonly reasoning_effort?: string | null;
}
interface UpstreamModel {
  readonly provider: string;
  readonly context_window?: number;
  readonly max_output_tokens?: number;
}

const catalogFile = JSON.parse(fs.readFileSync(path.join(ROOT, 'src/models/catalog.json'), 'utf8')) as {
  models: Row[];
  upstream_models: Record<string, UpstreamModel>;
};
const catalog = catalogFile.models;
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

const readCli = () =>
  JSON.parse(
    execFileSync(process.execPath, [path.join(ROOT, 'scripts/cli-model-ids.mjs')], {
      encoding: 'utf8',
      timeout: 120_000,
    }),
  ) as CliModels;

describe('the bundled provider_b and provider_c ids against the pinned CLIs', () => {
  let cli: CliModels;
  beforeAll(() => {
    cli = readCli();
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

  // The 404's hints (src/models/variant-hint.ts) read a last word that is an effort as no part of
  // an upstream name, and suggest a passthrough only of the characters upstream names have: a pin
  // that brings a name they would cut or refuse fails here.
  it("knows no model name that a 404's hint would cut or refuse: none ends in an effort word, none has another character", () => {
    const efforts = new Set([
      ...catalog.flatMap((row) => (row.reasoning_effort ? [row.reasoning_effort] : [])),
      ...['provider_a', 'provider_b', 'provider_c'].flatMap((provider) => [
        ...(familyOf(provider).catalog?.acceptedEfforts ?? []),
        ...Object.keys(familyOf(provider).catalog?.cliOnlyEfforts ?? {}),
      ]),
    ]);
    expect(efforts).toEqual(new Set(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max', 'ultra']));
    const names: Array<[string, string]> = [
      ...cliModelList().map((model): [string, string] => ['provider_a', model.slug]),
      ...cli['gemini-cli'].models.map((id): [string, string] => ['provider_b', id]),
      ...cli['claude-code'].models.flatMap((model) =>
        [model.id, model.first_party_id ?? model.id].map((id): [string, string] => ['provider_c', id]),
      ),
    ];
    expect(names.length).toBeGreaterThan(30);
    const cut = names.filter(([, id]) => efforts.has(id.slice(Math.max(id.lastIndexOf('-'), id.lastIndexOf(':')) + 1)));
    expect(cut).toEqual([]);
    expect(names.filter(([provider, id]) => !upstreamShaped(provider, id))).toEqual([]);
  });

  it('lists every provider_c model with the context window and max output tokens the pinned Claude Code gives it', () => {
    // The CLI takes a table id or the dated id it sends for it (`claude-haiku-4-5-20251001`); the
    // plain id gets the record's window (1M where the table says the model has it natively) and
    // `max_tokens` is the record's default. A pin that changes either fails here.
    const models = Object.entries(catalogFile.upstream_models).filter(
      ([name, info]) => info.provider === 'provider_c' && name.startsWith('claude-'),
    );
    expect(models.length).toBeGreaterThanOrEqual(8);
    const limits = (info: UpstreamModel | ClaudeRecord | undefined) =>
      info === undefined
        ? 'not in the pinned model table'
        : { context_window: info.context_window, max_output_tokens: info.max_output_tokens };
    expect(models.map(([name, info]) => ({ model: name, limits: limits(info) }))).toEqual(
      models.map(([name]) => ({
        model: name,
        limits: limits(
          cli['claude-code'].models.find((record) => record.id === name || record.first_party_id === name),
        ),
      })),
    );
  });
});

/**
 * Names users paste from the CLIs (their model aliases, an id in another case or with a space)
 * are no ids of the gateway: the 404 keeps them unserved but names what works instead
 * (docs/error-codes.md "model_not_found"). No upstream is asked: the answer comes before any.
 */
const LIST_TAIL = 'GET /v1/models lists the models this gateway serves';
const PASSTHROUGH_NOTE = "(an id with a family's prefix goes to that family's upstream as written)";

describe('a 404 for a name pasted from a CLI names what works', () => {
  const gateway = useGateway();
  let cli: CliModels;
  beforeAll(() => {
    cli = readCli();
  });

  const notFound = async (model: string) => {
    const response = await postChatBody(gateway, { model, messages: [{ role: 'user', content: 'hi' }] });
    expect(response.status).toBe(404);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('model_not_found');
    expect(error.message).toMatch(/GET \/v1\/models lists the models this gateway serves$/);
    return error.message;
  };
  const retrievable = async (id: string) =>
    (await fetch(`${gateway.url}/v1/models/${encodeURIComponent(id)}`)).status === 200;
  const aliasesOf = (provider: string) => familyOf(provider).catalog?.cliAliases ?? {};

  it.each([
    ['provider_b', 'gemini-cli', 'Gemini CLI'],
    ['provider_c', 'claude-code', 'Claude Code CLI'],
  ] as const)(
    'answers every model alias of the pinned CLI that is no id here (%s) naming the ids it declares, each of them served',
    async (provider, name, cliName) => {
      const aliases = cli[name].aliases.filter((alias) => !served(provider).has(alias));
      expect(aliases.length).toBeGreaterThan(0);
      // A pin that brings a new alias fails here until the family declares what it means.
      expect(aliases.filter((alias) => aliasesOf(provider)[alias] === undefined)).toEqual([]);
      for (const alias of Object.keys(aliasesOf(provider))) {
        const message = await notFound(alias);
        expect(message).toContain(`${alias} is a model alias of the ${cliName}`);
        for (const id of aliasesOf(provider)[alias]) {
          expect(message).toContain(id);
          expect({ id, served: await retrievable(id) }).toEqual({ id, served: true });
        }
      }
    },
  );

  it.each([
    ['GPT-6.2-SOL', 'did you mean gpt-6.2-sol?'],
    [' gpt-6.2-sol', 'did you mean gpt-6.2-sol?'],
    ['gemini-2.5-pro ', 'did you mean gemini-2.5-pro?'],
    ['Sonnet', 'did you mean sonnet?'],
    [' provider_b/gemini-2.5-pro', 'did you mean provider_b/gemini-2.5-pro'],
    ['claude-opus-5-5[1m]', 'did you mean claude-opus-5-5 or provider_c/claude-opus-5-5[1m]'],
    ['claude-opus-4-1', 'did you mean provider_c/claude-opus-4-1'],
    ['gemini-1.5-pro', 'did you mean provider_b/gemini-1.5-pro'],
    ['default', 'use sol or provider_c/default'],
  ])('answers %j naming what works: %s', async (model, words) => {
    expect(await notFound(model)).toContain(words);
  });

  it("lists a provider_c alias (sonnet, opus, …) with no more than the pinned CLI's model for it: the same limits and inputs", async () => {
    const listed = new Map(
      ((await (await fetch(`${gateway.url}/v1/models`)).json()) as { data: Array<Record<string, unknown>> }).data.map(
        (entry) => [entry.id as string, entry],
      ),
    );
    const limits = (entry: Record<string, unknown> | undefined) => ({
      context_window: entry?.context_window,
      max_output_tokens: entry?.max_output_tokens,
      input_modalities: entry?.input_modalities,
    });
    const aliases = ['sonnet', 'opus', 'haiku', 'fable'];
    for (const alias of aliases) {
      const newest = cli['claude-code'].models
        .filter((model) => model.family === alias)
        .map((model) => model.id)
        .reduce((best, id) => (newer(id, best) ? id : best));
      // The alias is its own family: the installed claude picks the model when the turn runs.
      expect(listed.get(alias)).toMatchObject({ owned_by: 'provider_c', family: alias });
      expect({ alias, ...limits(listed.get(alias)) }).toEqual({ alias, ...limits(listed.get(newest)) });
    }
  });

  // The passthrough form goes upstream as written: a suffix only the gateway's own ids carry
  // (`-<effort>`, `-fast`) would make the upstream answer 404 a second time.
  it.each([
    [
      'gpt-7-sol-high',
      'did you mean provider_a/gpt-7-sol with reasoning_effort: "high" (an id with a family\'s prefix goes to that family\'s upstream as written)?',
    ],
    [
      'gpt-7-sol',
      "did you mean provider_a/gpt-7-sol (an id with a family's prefix goes to that family's upstream as written)?",
    ],
    ['gpt-5.5-hihg', 'did you mean gpt-5.5?'],
    ['gpt-5.5-max', 'did you mean gpt-5.5?'],
    ['gpt-7-sol-fast', 'the model does not exist or is not enabled; GET /v1/models'],
  ])('answers the provider_a-shaped %j with a passthrough only where one can work: %s', async (model, words) => {
    const message = await notFound(model);
    expect(message).toContain(words);
    if (!words.includes('provider_a/')) expect(message).not.toContain('provider_a/');
  });

  // A tier id with a suffix its tier never had is a misspelling, not a tier that moved: the
  // nearest tier ids are named (at most three), else the tier id itself.
  it.each([
    ['sol-hgh', 'did you mean sol-high?'],
    ['sol-fast-hgh', 'did you mean sol-fast-high?'],
    ['Sol-Hihg', 'did you mean sol-high?'],
    ['terra-med', 'did you mean terra-medium?'],
    ['sol-xyz', 'did you mean sol?'],
  ])('answers the tier-shaped %j, no id of its tier, naming the nearest tier id: %s', async (model, words) => {
    expect(await notFound(model)).toBe(`the model does not exist or is not enabled; ${words} ${LIST_TAIL}`);
  });

  // No model name the pinned CLIs know ends in an effort word or holds a `:` (checked above against
  // their lists): a name that does is a catalog id with the effort as the gateway's suffix or a
  // variant tag, and a passthrough of it would reach the upstream as a name it does not know.
  it.each([
    ['claude-opus-4-8-high', 'did you mean claude-opus-4-8 with reasoning_effort: "high"?'],
    ['claude-opus-4-8:high', 'did you mean claude-opus-4-8 with reasoning_effort: "high"?'],
    ['claude-fable-5:high', 'did you mean claude-fable-5-high?'],
    [
      'claude-opus-4-1-max',
      `did you mean provider_c/claude-opus-4-1 with reasoning_effort: "max" ${PASSTHROUGH_NOTE}?`,
    ],
    ['gemini-2.5-pro-high', 'did you mean gemini-2.5-pro with reasoning_effort: "high"?'],
    ['gemini-2.5-pro[1m]', 'did you mean gemini-2.5-pro?'],
    ['gpt-6.2-sol:high', 'did you mean gpt-6.2-sol-high?'],
    ['gpt-7-sol:high', `did you mean provider_a/gpt-7-sol with reasoning_effort: "high" ${PASSTHROUGH_NOTE}?`],
    ['claude-opus-4-8:latest', undefined],
    ['gemini-2.5-pro@001', undefined],
    ['gpt-7-sol:beta', undefined],
  ])('answers %j with no passthrough an upstream would not know: %s', async (model, words) => {
    expect(await notFound(model)).toBe(
      `the model does not exist or is not enabled; ${words === undefined ? '' : `${words} `}${LIST_TAIL}`,
    );
  });

  it('answers an id that looks like nothing with the plain 404, and GET /v1/models/{id} as chat does', async () => {
    expect(await notFound('no-such-model')).toBe(
      'the model does not exist or is not enabled; GET /v1/models lists the models this gateway serves',
    );
    const response = await fetch(`${gateway.url}/v1/models/GPT-6.2-SOL`);
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain(
      'did you mean gpt-6.2-sol?',
    );
  });

  // The openai SDK sends a passthrough id's slash as written (before v5) or as %2F (since then).
  it('answers GET /v1/models/{id} for a passthrough id with its slash written or encoded', async () => {
    for (const path of ['provider_b/gemini-2.5-pro', 'provider_b%2Fgemini-2.5-pro']) {
      const response = await fetch(`${gateway.url}/v1/models/${path}`);
      expect({ path, status: response.status }).toEqual({ path, status: 200 });
      expect(await response.json()).toMatchObject({
        id: 'provider_b/gemini-2.5-pro',
        owned_by: 'provider_b',
        family: 'gemini-2.5-pro',
      });
    }
  });
});
