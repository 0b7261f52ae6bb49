import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ChatRequest } from '../../src/providers/shared/provider-adapter';
import { chatRequestFor } from './chat-request';
import type { FakeCodeAssist } from './fake-provider-b';

/** Options of `writeCredsFile`; every field is optional. */
export interface CredsFileOptions {
  /** Default `fake-access-initial`; `null` leaves the field out. */
  readonly accessToken?: string | null;
  /** Default `fake-refresh-token`; `null` leaves the field out. */
  readonly refreshToken?: string | null;
  /** Epoch **milliseconds**; default one hour ahead; `null` leaves `expiry_date` out. */
  readonly expiryDateMs?: number | null;
  /** Extra keys (unknown fields that a refresh must preserve). */
  readonly extra?: Record<string, unknown>;
}

/**
 * Writes a Gemini CLI login file `<dir>/oauth_creds.json` with mode 0600 (docs/upstream/provider-b.md §1.1,
 * docs/upstream/provider-b.md §12.3) and returns its path. `dir` is created when missing.
 */
export function writeCredsFile(dir: string, options: CredsFileOptions = {}): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'oauth_creds.json');
  const value: Record<string, unknown> = {
    scope: 'https://www.googleapis.com/auth/cloud-platform openid',
    token_type: 'Bearer',
    ...options.extra,
  };
  const accessToken = options.accessToken === undefined ? 'fake-access-initial' : options.accessToken;
  const refreshToken = options.refreshToken === undefined ? 'fake-refresh-token' : options.refreshToken;
  const expiry = options.expiryDateMs === undefined ? Date.now() + 3_600_000 : options.expiryDateMs;
  if (accessToken !== null) value.access_token = accessToken;
  if (refreshToken !== null) value.refresh_token = refreshToken;
  if (expiry !== null) value.expiry_date = expiry;
  fs.writeFileSync(file, JSON.stringify(value, null, 2), { mode: 0o600 });
  fs.chmodSync(file, 0o600);
  return file;
}

/** Usage of `finishFrame`, in Gemini's names shortened. */
export interface FrameUsage {
  readonly prompt?: number;
  readonly candidates?: number;
  readonly thoughts?: number;
  readonly toolUse?: number;
  readonly total?: number;
  readonly cached?: number;
}

const wrap = (candidate: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  response: {
    candidates: [{ content: { role: 'model', parts: [] }, ...candidate }],
    modelVersion: 'gemini-2.5-pro',
    responseId: 'r-1',
    ...extra,
  },
  traceId: 't-1',
});

/** A stream payload with one text part; `thought: true` makes it reasoning text. */
export function textFrame(text: string, options: { thought?: boolean } = {}): unknown {
  return wrap({ content: { role: 'model', parts: [{ text, ...(options.thought ? { thought: true } : {}) }] } });
}

/** A stream payload with one `functionCall` part (no `id` unless given), optionally signed. */
export function callFrame(
  name: string,
  args: Record<string, unknown> = {},
  options: { id?: string; signature?: string } = {},
): unknown {
  const part = {
    functionCall: { ...(options.id ? { id: options.id } : {}), name, args },
    ...(options.signature ? { thoughtSignature: options.signature } : {}),
  };
  return wrap({ content: { role: 'model', parts: [part] } });
}

/** A final payload with `finishReason` and, when given, `usageMetadata`. */
export function finishFrame(reason = 'STOP', usage?: FrameUsage): unknown {
  const usageMetadata = usage
    ? {
        ...(usage.prompt !== undefined ? { promptTokenCount: usage.prompt } : {}),
        ...(usage.candidates !== undefined ? { candidatesTokenCount: usage.candidates } : {}),
        ...(usage.thoughts !== undefined ? { thoughtsTokenCount: usage.thoughts } : {}),
        ...(usage.toolUse !== undefined ? { toolUsePromptTokenCount: usage.toolUse } : {}),
        ...(usage.total !== undefined ? { totalTokenCount: usage.total } : {}),
        ...(usage.cached !== undefined ? { cachedContentTokenCount: usage.cached } : {}),
      }
    : undefined;
  return wrap({ finishReason: reason }, usageMetadata ? { usageMetadata } : {});
}

/** `{"error": {code, message, status, details}}`: an error frame, or the body of a non-2xx reply. */
export function errorFrame(
  code: number,
  status: string,
  message = 'upstream says no',
  details: unknown[] = [],
): unknown {
  return { error: { code, message, status, details } };
}

/** A `google.rpc.RetryInfo` detail, e.g. `retryInfo('2s')`. */
export function retryInfo(retryDelay: string): Record<string, unknown> {
  return { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay };
}

/** A `google.rpc.QuotaFailure` detail naming one quota id. */
export function quotaFailure(quotaId: string): Record<string, unknown> {
  return { '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [{ quotaId }] };
}

/** A `google.rpc.ErrorInfo` detail with a reason. */
export function errorInfo(reason: string): Record<string, unknown> {
  return { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'cloudcode-pa.googleapis.com' };
}

/** The 403 a VPC Service Controls perimeter answers a Code Assist call with (the capture and the specs share it). */
export const PERIMETER_REFUSAL = {
  status: 403,
  body: errorFrame(403, 'PERMISSION_DENIED', "Request is prohibited by organization's policy.", [
    {
      '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
      reason: 'SECURITY_POLICY_VIOLATED',
      domain: 'googleapis.com',
    },
  ]),
};

/** A `google.rpc.Help` detail whose links point at `urls`, in order. */
export function helpLinks(...urls: string[]): Record<string, unknown> {
  return {
    '@type': 'type.googleapis.com/google.rpc.Help',
    links: urls.map((url, index) => ({ description: `link ${index + 1}`, url })),
  };
}

/**
 * Gateway settings (as environment variables) that point provider_b at `fake`, after writing a
 * valid login file under `<home>/.gemini/oauth_creds.json`. Pass `project` to set
 * PROVIDER_B_PROJECT (no discovery calls); leave it out to exercise `:loadCodeAssist`.
 *
 * ```ts
 * const gateway = await startGateway({ ...providerBSettings(fake, home), GATEWAY_PROVIDERS: 'provider_b' });
 * ```
 */
export function providerBSettings(
  fake: FakeCodeAssist,
  home: string,
  options: { project?: string; creds?: CredsFileOptions } = {},
): Record<string, string> {
  const geminiHome = path.join(home, '.gemini');
  const authFile = writeCredsFile(geminiHome, options.creds);
  return {
    GEMINI_HOME: geminiHome,
    PROVIDER_B_AUTH_FILE: authFile,
    PROVIDER_B_URL: fake.baseUrl,
    PROVIDER_B_TOKEN_URL: fake.tokenUrl,
    ...(options.project !== undefined ? { PROVIDER_B_PROJECT: options.project } : {}),
  };
}

/** A provider_b ChatRequest for `gemini-2.5-pro` saying "hi", with any field overridden. */
export function providerBChatRequest(overrides: Partial<ChatRequest> = {}): ChatRequest {
  return chatRequestFor('gemini-2.5-pro', overrides);
}

/**
 * The setup answers for a configured `project` that has no tier yet: loadCodeAssist offers the
 * default tier, onboardUser answers a pending operation and one getOperation completes it. The
 * oracle capture drives the real Gemini CLI through them and the oracle spec the gateway, so the
 * two are compared over the same answers.
 */
export function enqueueOnboardingThroughOperation(fake: FakeCodeAssist, project: string): void {
  fake.enqueue('loadCodeAssist', {
    body: {
      allowedTiers: [
        { id: 'standard-tier', name: 'Gemini Code Assist', isDefault: true, userDefinedCloudaicompanionProject: true },
      ],
    },
  });
  fake.enqueue('onboardUser', { body: { name: 'operations/onboard-1', done: false } });
  fake.enqueue('getOperation', {
    body: {
      name: 'operations/onboard-1',
      done: true,
      response: { cloudaicompanionProject: { id: project, name: 'oracle' } },
    },
  });
}
