import { buildProviderCArgs } from './provider-c.argv';

const BASE = ['-p', '--verbose', '--output-format=stream-json', '--include-partial-messages', '--no-session-persistence', '--tools', '', '--model'];

describe(buildProviderCArgs.name, () => {
  it('builds the §3.1 vector with an empty-string argument after --tools', () => {
    const args = buildProviderCArgs({ upstreamModel: 'claude-fable-5', reasoningEffort: null });
    expect(args).toEqual([...BASE, 'claude-fable-5']);
    expect(args[args.indexOf('--tools') + 1]).toBe('');
  });

  it.each(['low', 'medium', 'high'])('adds --effort %s', (effort) => {
    expect(buildProviderCArgs({ upstreamModel: 'claude-fable-5', reasoningEffort: effort })).toEqual([...BASE, 'claude-fable-5', '--effort', effort]);
  });

  it.each(['none', 'minimal', 'xhigh'])('omits --effort for %s', (effort) => {
    expect(buildProviderCArgs({ upstreamModel: 'claude-opus-4-8', reasoningEffort: effort })).toEqual([...BASE, 'claude-opus-4-8']);
  });
});
