/**
 * Model ids that draw on one Code Assist quota bucket, as the pinned Gemini CLI (0.61.0, its core's
 * `Config.refreshUserQuota`) counts them: it files a quota bucket of `gemini-3-flash`,
 * `gemini-3.5-flash` or `gemini-3.8-flash` under one Flash model, and one of
 * `gemini-3.1-flash-lite` or `gemini-3.5-flash-lite` under one Flash-Lite model. Its backend
 * mapping (`getBackendModelMappings`) sends those ids upstream as one another too. Preview ids
 * (`gemini-3-flash-preview`) are buckets of their own. docs/accounts.md "Cooldowns that end by
 * themselves" says what the pool does with it.
 */
const SHARED_BUCKETS: readonly (readonly string[])[] = [
  ['gemini-3-flash', 'gemini-3.5-flash', 'gemini-3.8-flash'],
  ['gemini-3.1-flash-lite', 'gemini-3.5-flash-lite'],
];

/** Each id of a shared bucket to the bucket's first id. */
const BUCKET_OF: ReadonlyMap<string, string> = new Map(SHARED_BUCKETS.flatMap((ids) => ids.map((id) => [id, ids[0]])));

/** The quota bucket an upstream model id draws on (a name to compare, not a model to send): the id itself unless shared. */
export function providerBQuotaBucket(model: string): string {
  return BUCKET_OF.get(model) ?? model;
}
