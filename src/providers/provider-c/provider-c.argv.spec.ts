import { CLAUDE_ARGV_BEFORE_MODEL as BASE } from '../../../test/support/provider-c-fixtures';
import { buildProviderCArgs } from './provider-c.argv';

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

  it.each(['none', 'minimal', 'extreme'])('omits --effort for %s, which the CLI does not know', (effort) => {
    expect(buildProviderCArgs({ upstreamModel: 'claude-opus-4-8', reasoningEffort: effort })).toEqual([
      ...BASE,
      'claude-opus-4-8',
    ]);
  });
});
