import * as path from 'node:path';
import { diffModelLists, readCliModelLists } from './model-ids-drift';

describe(diffModelLists.name, () => {
  const list = (
    version: string,
    models: (string | { id: string; [limit: string]: unknown })[],
    default_model?: string,
  ) => ({
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

  it("names a model whose context window or max output tokens a release changed (Claude Code's table)", () => {
    const pinned = list('2.0.0', [
      { id: 'claude-x', context_window: 200000, max_output_tokens: 32000, max_output_tokens_upper: 64000 },
      { id: 'claude-y', context_window: 1000000, max_output_tokens: 64000 },
    ]);
    const newest = list('2.1.0', [
      { id: 'claude-x', context_window: 1000000, max_output_tokens: 32000, max_output_tokens_upper: 128000 },
      { id: 'claude-y', context_window: 1000000 },
    ]);
    const where = 'claude-code model list (2.0.0 → 2.1.0)';
    expect(diffModelLists('claude-code', pinned, newest)).toEqual([
      { where, change: 'changed', key: 'model claude-x context_window', committed: ['200000'], fresh: ['1000000'] },
      {
        where,
        change: 'changed',
        key: 'model claude-x max_output_tokens_upper',
        committed: ['64000'],
        fresh: ['128000'],
      },
      { where, change: 'removed', key: 'model claude-y max_output_tokens', committed: ['64000'] },
    ]);
  });

  it('reads the pinned CLIs: the same release compared with itself shows no drift', () => {
    const lists = readCliModelLists(path.join(__dirname, '..', '..', 'oracles'));
    expect(lists['gemini-cli'].models.length).toBeGreaterThan(0);
    expect(lists['claude-code'].models.length).toBeGreaterThan(0);
    for (const cli of ['gemini-cli', 'claude-code'] as const)
      expect(diffModelLists(cli, lists[cli], lists[cli])).toEqual([]);
  });
});
