import type { ResolvedModel } from '../../core/resolved-model';

/** Every `--effort` level Claude Code 2.1.332 accepts (`claude --help`: low, medium, high, xhigh, max). */
export const CLI_EFFORTS: ReadonlySet<string> = new Set(['low', 'medium', 'high', 'xhigh', 'max']);

/**
 * The thinking every `reasoning_effort` asks of the CLI besides `--effort` (checked against the
 * real 2.1.332 binary: the API request it sends). `MAX_THINKING_TOKENS` is the budget of a model
 * that thinks on a budget instead of effort levels (`claude-haiku-4-5-20251001`), where `--effort`
 * changes nothing; a model with adaptive thinking ignores a budget and follows `--effort`. `0`
 * turns thinking off (`thinking: {"type":"disabled"}`) on a model that can answer without it; the
 * CLI keeps one that always thinks adaptive, at `--effort low`. The CLI holds a budget between
 * 1024 and the request's `max_tokens` minus one. `low`, `medium` and `high` get the budgets of
 * Claude Code's own thinking words (`think`, `think hard`, `think harder` in 1.0.0; 2.1.332 has
 * none). `high`'s is already the largest below haiku 4.5's `max_tokens` of 32,000, so `xhigh` and
 * `max` get it too.
 */
const THINKING_BUDGETS: ReadonlyMap<string, Readonly<Record<string, string>>> = new Map(
  Object.entries({ none: 0, minimal: 1024, low: 4000, medium: 10_000, high: 31_999, xhigh: 31_999, max: 31_999 }).map(
    ([effort, budget]) => [effort, { MAX_THINKING_TOKENS: String(budget) }],
  ),
);
/** `none` and `minimal` are no `--effort` level: they run at the lowest. */
const LOWEST_EFFORT = 'low';

/**
 * docs/upstream/provider-c.md §3.1 + §9: the argument vector after the command. The model arrives resolved (catalog row or
 * passthrough, with the request's `reasoning_effort` already applied); `none` and `minimal` ask for
 * the lowest `--effort`; every effort adds the variables of `effortEnvironment`.
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

/** The child variables the request's effort adds to the login's (its thinking budget), or undefined without one. */
export function effortEnvironment(
  model: Pick<ResolvedModel, 'reasoningEffort'>,
): Readonly<Record<string, string>> | undefined {
  return model.reasoningEffort === null ? undefined : THINKING_BUDGETS.get(model.reasoningEffort);
}
