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
});
