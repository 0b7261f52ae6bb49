import { CLAUDE_ARGV_BEFORE_MODEL as BASE } from '../../../test/support/provider-c-fixtures';
import { buildProviderCArgs, effortEnvironment } from './provider-c.argv';

describe(buildProviderCArgs.name, () => {
  it('builds the docs/upstream/provider-c.md §3.1 vector with empty-string arguments after --setting-sources and --tools', () => {
    const args = buildProviderCArgs({ upstreamModel: 'claude-fable-5', reasoningEffort: null });
    expect(args).toEqual([...BASE, 'claude-fable-5']);
    expect(args[args.indexOf('--tools') + 1]).toBe('');
    expect(args[args.indexOf('--setting-sources') + 1]).toBe('');
  });

  it.each(['low', 'medium', 'high', 'xhigh', 'max'])(
    'adds --effort %s (every level of `claude --help` 2.1.332)',
    (effort) => {
      expect(buildProviderCArgs({ upstreamModel: 'claude-fable-5', reasoningEffort: effort })).toEqual([
        ...BASE,
        'claude-fable-5',
        '--effort',
        effort,
      ]);
    },
  );

  it.each(['none', 'minimal'])('asks for the lowest --effort for %s, with the thinking variables', (effort) => {
    const model = { upstreamModel: 'claude-opus-4-8', reasoningEffort: effort };
    expect(buildProviderCArgs(model)).toEqual([...BASE, 'claude-opus-4-8', '--effort', 'low']);
    expect(effortEnvironment(model)).toEqual({ MAX_THINKING_TOKENS: effort === 'none' ? '0' : '1024' });
  });

  it.each([null, 'high', 'extreme'])('adds no thinking variables for %s', (effort) => {
    expect(effortEnvironment({ reasoningEffort: effort })).toBeUndefined();
  });

  it('omits --effort for a word the CLI does not know', () => {
    expect(buildProviderCArgs({ upstreamModel: 'claude-opus-4-8', reasoningEffort: 'extreme' })).toEqual([
      ...BASE,
      'claude-opus-4-8',
    ]);
  });
});
