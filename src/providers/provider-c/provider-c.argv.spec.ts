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

  // Claude Code 1.0.0's budgets for the prompt words `think`, `think hard`, `think harder`; the
  // top of the scale is the largest budget below haiku 4.5's 32,000-token `max_tokens`.
  it.each([
    ['low', '4000'],
    ['medium', '10000'],
    ['high', '31999'],
    ['xhigh', '31999'],
    ['max', '31999'],
  ])('gives %s the thinking budget %s, for a model that thinks on a budget', (effort, budget) => {
    const model = { upstreamModel: 'claude-haiku-4-5-20251001', reasoningEffort: effort };
    expect(effortEnvironment(model)).toEqual({ MAX_THINKING_TOKENS: budget });
    expect(buildProviderCArgs(model)).toEqual([...BASE, 'claude-haiku-4-5-20251001', '--effort', effort]);
  });

  it.each([null, 'extreme', 'constructor'])('adds no thinking variables for %s', (effort) => {
    expect(effortEnvironment({ reasoningEffort: effort })).toBeUndefined();
  });

  it('omits --effort for a word the CLI does not know', () => {
    expect(buildProviderCArgs({ upstreamModel: 'claude-opus-4-8', reasoningEffort: 'extreme' })).toEqual([
      ...BASE,
      'claude-opus-4-8',
    ]);
  });
});
