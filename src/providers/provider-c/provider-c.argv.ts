import type { ResolvedModel } from '../../core/resolved-model';

/** Every `--effort` level Claude Code 2.1.332 accepts (`claude --help`: low, medium, high, xhigh, max). */
export const CLI_EFFORTS: ReadonlySet<string> = new Set(['low', 'medium', 'high', 'xhigh', 'max']);

/**
 * What `none` and `minimal` ask of the CLI (checked against the real 2.1.332 binary: the API
 * request it sends). Both run at the lowest `--effort`. `MAX_THINKING_TOKENS=0` turns thinking off
 * (`thinking: {"type":"disabled"}`) on a model that can answer without it; the CLI keeps a model
 * that always thinks adaptive, at that effort. A budget of 1024 (the CLI raises any smaller one to
 * it) is what a model that thinks on a budget instead of effort levels gets for `minimal`; the CLI
 * ignores it for adaptive thinking.
 */
const LOWEST_EFFORT = 'low';
const NO_THINKING: Readonly<Record<string, string>> = { MAX_THINKING_TOKENS: '0' };
const LEAST_THINKING: Readonly<Record<string, string>> = { MAX_THINKING_TOKENS: '1024' };

/**
 * docs/upstream/provider-c.md §3.1 + §9: the argument vector after the command. The model arrives resolved (catalog row or
 * passthrough, with the request's `reasoning_effort` already applied); `none` and `minimal` ask for
 * the lowest `--effort`, with the variables of `effortEnvironment`.
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
  const effort = model.reasoningEffort;
  if (effort !== null && CLI_EFFORTS.has(effort)) args.push('--effort', effort);
  else if (effortEnvironment(model)) args.push('--effort', LOWEST_EFFORT);
  return args;
}

/** The child variables an effort adds to the login's (`none`, `minimal`), or undefined. */
export function effortEnvironment(
  model: Pick<ResolvedModel, 'reasoningEffort'>,
): Readonly<Record<string, string>> | undefined {
  if (model.reasoningEffort === 'none') return NO_THINKING;
  return model.reasoningEffort === 'minimal' ? LEAST_THINKING : undefined;
}
