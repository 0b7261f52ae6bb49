import { modelNotFound, withoutTag } from './model-not-found';

const EMPTY = {
  allEntries: [],
  byId: new Map(),
  infos: new Map(),
  droppedModels: () => [],
  listed: [],
  tiers: [],
  aliases: new Map(),
  defaultModel: 'sol',
};
const servesAll = () => true;

describe(withoutTag.name, () => {
  it.each([
    ['opus[1m]', 'opus'],
    ['claude-sonnet-4-6[1m]', 'claude-sonnet-4-6'],
    ['opus', 'opus'],
    ['opus[1m', 'opus[1m'],
    ['[]', ''],
    ['a]b]', 'a]b]'],
  ])('%j → %j', (id, bare) => {
    expect(withoutTag(id)).toBe(bare);
  });
});

describe(modelNotFound.name, () => {
  const withSol = { ...EMPTY, byId: new Map([['sol', { id: 'sol', provider: 'provider_a' }]]) } as never;

  it('names the served id that differs only in case or spaces', () => {
    expect(modelNotFound(' SOL ', withSol, servesAll).publicMessage).toMatch(/did you mean sol\?/);
  });

  // Suggestions read the id several times (case, spaces, a trailing tag): a body may hold a
  // model id of megabytes, and no upstream name is longer than the bound.
  it('suggests nothing for an id longer than any upstream name, but still names a disabled family', () => {
    expect(modelNotFound(`${' '.repeat(200)}SOL`, withSol, servesAll).publicMessage).toBeUndefined();
    expect(modelNotFound('['.repeat(300_000), EMPTY, servesAll).publicMessage).toBeUndefined();
    const long = `claude-${'x'.repeat(200)}`;
    expect(modelNotFound(long, EMPTY, (family) => family !== 'provider_c').publicMessage).toMatch(
      /belongs to provider_c, which this gateway does not enable \(GATEWAY_PROVIDERS\)/,
    );
  });

  it('still suggests for an id of exactly the longest suggested length', () => {
    expect(modelNotFound(`${' '.repeat(157)}SOL`, withSol, servesAll).publicMessage).toMatch(/did you mean sol\?/);
    expect(modelNotFound(`${' '.repeat(158)}SOL`, withSol, servesAll).publicMessage).toBeUndefined();
  });

  it("names default_model as the fix when the gateway's default model belongs to a family it does not enable", () => {
    const now = { ...EMPTY, defaultModel: 'claude-sonnet-4-6' };
    const withoutC = (family: string) => family !== 'provider_c';
    expect(modelNotFound('claude-sonnet-4-6', now, withoutC).publicMessage).toMatch(
      /belongs to provider_c, .*it is the gateway's default model.*another default_model \(GATEWAY_MODEL_CATALOG\)/,
    );
    expect(modelNotFound('claude-opus-4-6', now, withoutC).publicMessage).toBe(
      'the model belongs to provider_c, which this gateway does not enable (GATEWAY_PROVIDERS); GET /v1/models lists the models it serves',
    );
  });

  it('never suggests a passthrough id of a family the gateway does not enable', () => {
    // "default" is taken for the gateway's default model, here a passthrough id of provider_b.
    const now = { ...EMPTY, defaultModel: 'provider_b/gemini-2.5-pro' };
    expect(modelNotFound('default', now, servesAll).publicMessage).toContain('use provider_b/gemini-2.5-pro or');
    const withoutB = modelNotFound('default', now, (family) => family !== 'provider_b').publicMessage;
    expect(withoutB).toMatch(
      /^the model does not exist or is not enabled: default is a model alias of the Claude Code/,
    );
    expect(withoutB).not.toContain('provider_b/');
  });
});
