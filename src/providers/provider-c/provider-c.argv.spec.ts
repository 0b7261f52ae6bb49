import { buildProviderCArgs } from './provider-c.argv';

const BASE = [
  '-p',
  '--verbose',
  '--output-format=stream-json',
  '--include-partial-messages',
  '--no-session-persistence',
  '--setting-sources',
  '',
  '--strict-mcp-config',
  '--safe-mode',
  '--disable-slash-commands',
  '--tools',
  '',
  '--model',
];

describe(buildProviderCArgs.name, () => {
  it('builds the §3.1 vector with empty-string arguments after --setting-sources and --tools', () => {
    const args = buildProviderCArgs({ upstreamModel: 'claude-fable-5', reasoningEffort: null });
    expect(args).toEqual([...BASE, 'claude-fable-5']);
    expect(args[args.indexOf('--tools') + 1]).toBe('');
    expect(args[args.indexOf('--setting-sources') + 1]).toBe('');
  });

  it.each(['low', 'medium', 'high', 'xhigh', 'max'])('adds --effort %s (every level of `claude --help` 2.1.330)', (effort) => {
    expect(buildProviderCArgs({ upstreamModel: 'claude-fable-5', reasoningEffort: effort })).toEqual([...BASE, 'claude-fable-5', '--effort', effort]);
  });

  it.each(['none', 'minimal', 'extreme'])('omits --effort for %s, which the CLI does not know', (effort) => {
    expect(buildProviderCArgs({ upstreamModel: 'claude-opus-4-8', reasoningEffort: effort })).toEqual([...BASE, 'claude-opus-4-8']);
  });
});
