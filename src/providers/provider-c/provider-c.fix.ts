import type { FamilyFix } from '../../core/family';

/** The Claude Code CLI's login, install and update commands, and its paid usage: what provider_c's messages name. */
export const PROVIDER_C_FIX = {
  cli: 'Claude Code CLI',
  login: "run `claude` on the gateway's machine, then `/login` (or create a token with `claude setup-token`)",
  install: 'install it (`npm install -g @anthropic-ai/claude-code`) or set PROVIDER_C_COMMAND to its path',
  update:
    "run `claude update` on the gateway's machine (in the container image: rebuild it with a newer CLAUDE_CODE_PACKAGE); the next request runs the new version, no restart needed",
  paidUsage: { name: "Claude's extra usage", page: 'claude.ai/settings/usage' },
} satisfies FamilyFix;

/**
 * Where an admin of a Claude Team or Enterprise organization manages its usage and spending caps
 * (the page Claude Code 2.1.332 sends such admins to): what lifts a pause at the organization's cap.
 */
export const PROVIDER_C_ORGANIZATION_PAGE = 'claude.ai/admin-settings/usage';
