/**
 * Claude's weekly windows that limit one model family only, by the name Claude Code gives them (in
 * its usage answer and its `rate_limit_event`), with that family. Claude Code 2.1.332 applies a
 * spent `seven_day_opus` window only to a model whose family is Opus, and `seven_day_sonnet` only
 * to Sonnet (it resolves the model id, alias or full id, and compares its family): for any other
 * model the login still serves (docs/upstream/provider-c.md "Plan meters"). The family is what the
 * window names as its `model` (PlanWindow.model), and the quota bucket of every id of that family.
 */
export const PROVIDER_C_MODEL_WINDOWS: Readonly<Record<string, string>> = {
  seven_day_opus: 'opus',
  seven_day_sonnet: 'sonnet',
};

/** A family's name as one word of a model id: `opus`, `opus[1m]`, `claude-opus-4-8`, `claude-3-opus-20240229`. */
const FAMILY_WORD = /(?:^|[-/])(opus|sonnet)(?:$|[-[])/;

/**
 * The quota bucket an upstream model id draws on (a name to compare, not a model to send): its
 * family, `opus` or `sonnet`, for the ids a per-model window limits; else the id itself.
 */
export function providerCQuotaBucket(model: string): string {
  return FAMILY_WORD.exec(model.toLowerCase())?.[1] ?? model;
}
