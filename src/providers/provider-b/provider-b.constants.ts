import * as os from 'node:os';

/**
 * The Gemini CLI's "installed application" OAuth client (provider_b.md §2.1). These are public
 * values shipped inside that CLI: an installed-app client cannot keep a secret, and Google treats
 * them as non-confidential. Refresh tokens minted for that client only refresh with it, so they
 * live here and not in configuration.
 */
export const GEMINI_CLI_CLIENT_ID = '681255809395-oo8ft2oprdrnp9e3aqf6av3hmdib135j.apps.googleusercontent.com';
export const GEMINI_CLI_CLIENT_SECRET = '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';

/** The Gemini CLI version we present in `User-Agent` (provider_b.md §5.2). */
export const GEMINI_CLI_VERSION = '0.9.0';

/** `GeminiCLI/<version> (<platform>; <arch>)`, platform and arch from the runtime (fixed per process). */
export const PROVIDER_B_USER_AGENT = `GeminiCLI/${GEMINI_CLI_VERSION} (${os.platform()}; ${os.arch()})`;

/** Client metadata sent with `:loadCodeAssist` and `:onboardUser` (provider_b.md §4.2). */
export const CODE_ASSIST_METADATA = { ideType: 'IDE_UNSPECIFIED', platform: 'PLATFORM_UNSPECIFIED', pluginType: 'GEMINI' } as const;

/** Bound on one call to the OAuth token endpoint. */
export const TOKEN_REQUEST_TIMEOUT_MS = 30_000;

/** Signature the backend accepts on a replayed call whose real signature is unknown (§8). */
export const SKIP_THOUGHT_SIGNATURE = 'skip_thought_signature_validator';

/** Fallback declaration of a custom tool without parameters (provider_b.md §7.1). */
export const CUSTOM_TOOL_FALLBACK_PARAMETERS = {
  type: 'object',
  properties: { input: { type: 'string', description: 'Raw text input for this tool.' } },
  required: ['input'],
} as const;

/** Onboarding long-running operation polling (provider_b.md §4.3): every 5 s, at most 12 times. */
const onboardingPoll = { intervalMs: 5_000, maxPolls: 12 };

export function onboardingPollIntervalMs(): number {
  return onboardingPoll.intervalMs;
}

export function onboardingMaxPolls(): number {
  return onboardingPoll.maxPolls;
}

/**
 * Test seam: shortens the onboarding poll interval for this process (a 5 s wait would make
 * the onboarding tests slow). Returns a function that restores the previous value. Production
 * code never calls it; there is deliberately no NODE_ENV branch.
 */
export function overrideOnboardingPollInterval(intervalMs: number): () => void {
  const previous = onboardingPoll.intervalMs;
  onboardingPoll.intervalMs = intervalMs;
  return () => {
    onboardingPoll.intervalMs = previous;
  };
}
