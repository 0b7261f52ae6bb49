/**
 * The model aliases of the pinned Claude Code (2.1.332's alias list, plus `default`, which its
 * `--model` also takes) that are no ids of the catalog, each with what a 404 for it names: the
 * passthrough id that hands the alias to `claude` as it is (the CLI resolves it by account and
 * mode, as it would on its own), then the catalog id nearest to it. `sonnet`, `opus`, `haiku` and
 * `fable` are catalog ids themselves. `[1m]` asks the CLI for the long context window; `opusplan`
 * means Opus in plan mode and Sonnet otherwise; `best` the most capable model; `default` the
 * account's default model.
 */
export const CLAUDE_CODE_ALIASES: Readonly<Record<string, readonly string[]>> = {
  best: ['provider_c/best', 'opus'],
  opusplan: ['provider_c/opusplan', 'sonnet', 'opus'],
  default: ['provider_c/default'],
  'sonnet[1m]': ['provider_c/sonnet[1m]', 'sonnet'],
  'opus[1m]': ['provider_c/opus[1m]', 'opus'],
  'fable[1m]': ['provider_c/fable[1m]', 'fable'],
};
