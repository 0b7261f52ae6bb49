import type { ResolvedModel } from '../../core/resolved-model';

/** Every `--effort` level Claude Code 2.1.332 accepts (`claude --help`: low, medium, high, xhigh, max). */
export const CLI_EFFORTS: ReadonlySet<string> = new Set(['low', 'medium', 'high', 'xhigh', 'max']);

/**
 * docs/upstream/provider-c.md §3.1 + §9: the argument vector after the command. The model arrives resolved (catalog row or
 * passthrough, with the request's `reasoning_effort` already applied); an effort the CLI does not
 * know (`none`, `minimal`) omits `--effort`, leaving the CLI's default.
 *
 * `--tools ""` disables every built-in tool. The child is also isolated from the operator's own
 * Claude Code setup (checked against the real 2.1.332 binary with a seeded home): no settings
 * files (`--setting-sources ""`: their env, model, permissions, apiKeyHelper), no MCP servers
 * but ours, i.e. none (`--strict-mcp-config`), no CLAUDE.md memory, hooks, installed plugins,
 * skills or custom agents (`--safe-mode`, which leaves the login alone), and no slash commands
 * a prompt could trigger (`--disable-slash-commands`). `--bare` would isolate too, but it never
 * reads the OAuth login. `--include-partial-messages` is what makes the CLI print the API's
 * stream events (`message_start`, deltas), which the turn's acceptance waits for.
 */
export function buildProviderCArgs(model: Pick<ResolvedModel, 'upstreamModel' | 'reasoningEffort'>): string[] {
  const args = [
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
    model.upstreamModel,
  ];
  if (model.reasoningEffort !== null && CLI_EFFORTS.has(model.reasoningEffort))
    args.push('--effort', model.reasoningEffort);
  return args;
}
