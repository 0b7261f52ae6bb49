import * as os from 'node:os';
import { GOOGLE_AUTH_LIBRARY_AGENT } from '../../accounts/provider-b/provider-b.auth';

/**
 * The pinned Gemini CLI whose requests we match (oracles/package.json, the oracle capture in
 * __fixtures__/gemini-cli-<version>.capture.json). Bumping the CLI is the pin, a new capture and
 * this line; src/providers/oracle-pins.spec.ts fails while this line is not the pin.
 */
export const GEMINI_CLI_VERSION = '0.61.0';

/**
 * The User-Agent the pinned CLI sends on every Code Assist call (captured):
 * `GeminiCLI-tui/<version>/<model> (<platform>; <arch>; terminal) google-api-nodejs-client/10.9.0`.
 * The model is the one of the turn; the last token is the HTTP library the CLI's auth client
 * appends, kept so the backend sees the same client string.
 */
export function providerBUserAgent(model: string): string {
  return `GeminiCLI-tui/${GEMINI_CLI_VERSION}/${model} (${os.platform()}; ${os.arch()}; terminal) ${GOOGLE_AUTH_LIBRARY_AGENT}`;
}

/** `x-goog-api-client` as the CLI's auth library sends it: the Node.js runtime version. */
export { GOOG_API_CLIENT } from '../../accounts/provider-b/provider-b.auth';

/** Client metadata of `:loadCodeAssist` and `:onboardUser` (captured from the pinned CLI). */
export const CODE_ASSIST_METADATA = {
  ideType: 'IDE_UNSPECIFIED',
  platform: 'PLATFORM_UNSPECIFIED',
  pluginType: 'GEMINI',
} as const;

/** Signature the backend accepts on a replayed call whose real signature is unknown (docs/upstream/provider-b.md §8). */
export const SKIP_THOUGHT_SIGNATURE = 'skip_thought_signature_validator';

/**
 * What the pinned CLI adds to the contents when it sends a thoughts-only or empty turn again
 * (geminiChat `applyRetryNudge`), by the reason the turn was invalid; sent as the CLI sends them so
 * the backend sees the same retry. After tool results it first closes them with a model turn.
 */
export const RETRY_NUDGES: Readonly<Record<string, string>> = {
  THINKING_ONLY_RESPONSE:
    '[System: You previously generated thoughts but failed to provide a final user-facing response. Please ensure you provide your final answer or call a tool now.]',
  NO_RESPONSE_TEXT:
    '[System: You previously returned an empty response with no text or thoughts. Please ensure you provide your final answer or call a tool now.]',
};
export const TOOL_RESULTS_CLOSED = '[Tool execution completed.]';

/** Fallback declaration of a custom tool without parameters (docs/upstream/provider-b.md §7.1). */
export const CUSTOM_TOOL_FALLBACK_PARAMETERS = {
  type: 'object',
  properties: { input: { type: 'string', description: 'Raw text input for this tool.' } },
  required: ['input'],
} as const;

/** The pinned Gemini CLI's default model (`DEFAULT_GEMINI_MODEL`): the User-Agent of calls outside a turn (the quota read). */
export const GEMINI_CLI_DEFAULT_MODEL = 'gemini-2.5-pro';

/**
 * The model ids the pinned CLI configures with its `chat-base-3` alias (`DEFAULT_MODEL_CONFIGS`),
 * which asks for `thinkingConfig.thinkingLevel: "HIGH"`; it picks the config by the id it runs
 * with (`cliModelId`), and an id it has no config for gets `chat-base`, thoughts alone. The oracle
 * spec checks this list against the installed CLI.
 */
export const THINKING_LEVEL_HIGH_MODELS: ReadonlySet<string> = new Set([
  'gemini-3-pro-preview',
  'gemini-3-flash-preview',
  'gemini-3.1-pro-preview',
  'gemini-3.1-pro-preview-customtools',
  'gemini-3.1-flash-lite-preview',
  'gemini-3.1-flash-lite',
  'gemini-3.5-flash-lite',
  'gemini-3.5-flash',
  'gemini-3.8-flash',
  'gemma-4-31b-it',
  'gemma-4-26b-a4b-it',
]);
