import type { ResolvedModel } from '../../core/resolved-model';

const CLI_EFFORTS = new Set(['low', 'medium', 'high']);

/**
 * §3.1 + §9: the argument vector after the command. The model arrives resolved (catalog row or
 * passthrough, with the request's `reasoning_effort` already applied); only `low`, `medium` and
 * `high` exist as `--effort` values, anything else (`none`, `minimal`, `xhigh`) omits the flag.
 * `--tools` is followed by an empty-string argument: it disables every built-in tool.
 */
export function buildProviderCArgs(model: Pick<ResolvedModel, 'upstreamModel' | 'reasoningEffort'>): string[] {
  const args = ['-p', '--verbose', '--output-format=stream-json', '--include-partial-messages', '--no-session-persistence', '--tools', '', '--model', model.upstreamModel];
  if (model.reasoningEffort !== null && CLI_EFFORTS.has(model.reasoningEffort)) args.push('--effort', model.reasoningEffort);
  return args;
}
