/**
 * The pinned Gemini CLI's model aliases (`GEMINI_MODEL_ALIAS_*` of its core `config/models.ts`)
 * with the ids its `resolveModel` turns each into, the one for a login without preview or
 * latest-Flash access first: the CLI chooses by the account's access (and `auto` per request), so
 * a 404 for one names these rather than the gateway guessing (docs/chat.md "Model ids").
 */
export const GEMINI_CLI_ALIASES: Readonly<Record<string, readonly string[]>> = {
  pro: ['gemini-2.5-pro', 'gemini-3.1-pro-preview', 'gemini-3-pro-preview'],
  flash: ['gemini-3.5-flash', 'gemini-3-flash-preview', 'gemini-3.8-flash'],
  'flash-lite': ['gemini-3.1-flash-lite', 'gemini-3.5-flash-lite'],
  auto: ['gemini-2.5-pro', 'gemini-3.5-flash'],
};
