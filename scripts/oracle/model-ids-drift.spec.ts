import * as path from 'node:path';
import { diffModelLists, readCliModelLists } from './model-ids-drift';

describe(diffModelLists.name, () => {
  const list = (version: string, models: (string | { id: string })[], default_model?: string) => ({
    version,
    models,
    default_model,
  });

  it('names the ids a release added and dropped, and a changed default', () => {
    const pinned = list('1.0.0', ['gemini-a', 'gemini-b'], 'gemini-a');
    const newest = list('1.1.0', ['gemini-b', 'gemini-c'], 'gemini-c');
    expect(diffModelLists('gemini-cli', pinned, newest)).toEqual([
      { where: 'gemini-cli model list (1.0.0 → 1.1.0)', change: 'added', key: 'model gemini-c', fresh: ['gemini-c'] },
      {
        where: 'gemini-cli model list (1.0.0 → 1.1.0)',
        change: 'removed',
        key: 'model gemini-a',
        committed: ['gemini-a'],
      },
      {
        where: 'gemini-cli model list (1.0.0 → 1.1.0)',
        change: 'changed',
        key: 'default model',
        committed: ['gemini-a'],
        fresh: ['gemini-c'],
      },
    ]);
  });

  it('reads records by id and finds nothing between equal lists', () => {
    const records = [{ id: 'claude-x' }, { id: 'claude-y' }];
    expect(diffModelLists('claude-code', list('2.0.0', records), list('2.0.1', [...records].reverse()))).toEqual([]);
  });

  it('reads the pinned CLIs: the same release compared with itself shows no drift', () => {
    const lists = readCliModelLists(path.join(__dirname, '..', '..', 'oracles'));
    expect(lists['gemini-cli'].models.length).toBeGreaterThan(0);
    expect(lists['claude-code'].models.length).toBeGreaterThan(0);
    for (const cli of ['gemini-cli', 'claude-code'] as const)
      expect(diffModelLists(cli, lists[cli], lists[cli])).toEqual([]);
  });
});
