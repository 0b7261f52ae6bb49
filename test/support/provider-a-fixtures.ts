import * as fs from 'node:fs';
import * as path from 'node:path';
import type { GatewayError } from '../../src/core/gateway.error';
import { ModelCatalog } from '../../src/models/model-catalog';
import type { CallContext, ChatRequest } from '../../src/providers/shared/provider-adapter';
import type { ChatEvent } from '../../src/core/chat-event';
import type { EventLogger } from '../../src/core/event-logger';
import { recordingLogger } from './recorders';
import type { ResolvedModel } from '../../src/core/resolved-model';
import { chatRequestFor } from './chat-request';
import type { FakeFrame, FakeProviderA, FakeScript } from './fake-provider-a';

/**
 * Test fixtures for provider_a (docs/upstream/provider-a.md §11.4–§11.5): unsigned JWTs, Codex login files,
 * the installation id, a tiny faithful profile, upstream event frames for `FakeProviderA`
 * scripts, and the settings that point a gateway at the fake.
 */

const AUTH_CLAIM = 'https://api.openai.com/auth';

/** `base64url({"alg":"none"}) + "." + base64url(claims) + "."` — never a real token. */
export function makeJwt(claims: Record<string, unknown>): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${encode({ alg: 'none' })}.${encode(claims)}.`;
}

export interface AuthFileOptions {
  /** Access-token `exp` (unix seconds); default now + 1 h. */
  exp?: number;
  /** `tokens.account_id`; `null` omits it. Default `acct-test-1`. */
  accountId?: string | null;
  /** Put this account id into the id token's `https://api.openai.com/auth` claim. */
  idTokenAccountId?: string;
  /** The id token's `sub`: the user, which tells members of one team workspace apart. */
  idTokenSubject?: string;
  /** `tokens.refresh_token`; `null` omits it. Default `rt-initial`. */
  refreshToken?: string | null;
  /** Explicit access token (else a JWT with `exp` and a unique `jti`). */
  accessToken?: string;
  /** `tokens.expires_at` (unix seconds), written only when given. */
  expiresAt?: number;
  /** Unknown top-level keys, for the preservation test. */
  extra?: Record<string, unknown>;
  /** File name inside `dir`; default `auth.json`. */
  fileName?: string;
}

export interface WrittenAuthFile {
  readonly path: string;
  readonly accessToken: string;
  readonly refreshToken?: string;
  readonly accountId?: string;
}

let accessCounter = 0;

/** Writes a Codex `auth.json` (docs/upstream/provider-a.md §1.2) with mode 0600 into `dir` (created if needed). */
export function writeAuthFile(dir: string, options: AuthFileOptions = {}): WrittenAuthFile {
  fs.mkdirSync(dir, { recursive: true });
  const exp = options.exp ?? Math.floor(Date.now() / 1000) + 3600;
  const accessToken = options.accessToken ?? makeJwt({ exp, jti: `initial-${++accessCounter}` });
  const accountId = options.accountId === null ? undefined : (options.accountId ?? 'acct-test-1');
  const refreshToken = options.refreshToken === null ? undefined : (options.refreshToken ?? 'rt-initial');
  const idClaims: Record<string, unknown> = { exp };
  if (options.idTokenAccountId) idClaims[AUTH_CLAIM] = { chatgpt_account_id: options.idTokenAccountId };
  if (options.idTokenSubject) idClaims.sub = options.idTokenSubject;
  const tokens: Record<string, unknown> = { id_token: makeJwt(idClaims), access_token: accessToken };
  if (refreshToken !== undefined) tokens.refresh_token = refreshToken;
  if (accountId !== undefined) tokens.account_id = accountId;
  if (options.expiresAt !== undefined) tokens.expires_at = options.expiresAt;
  const document = { OPENAI_API_KEY: null, tokens, last_refresh: '2026-01-05T09:12:44.120Z', ...options.extra };
  const file = path.join(dir, options.fileName ?? 'auth.json');
  fs.writeFileSync(file, JSON.stringify(document, null, 2) + '\n', { mode: 0o600 });
  fs.chmodSync(file, 0o600);
  return { path: file, accessToken, refreshToken, accountId };
}

/** Writes `$CODEX_HOME/installation_id` (default `install-test-1`). */
export function writeInstallationId(dir: string, value = 'install-test-1'): string {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'installation_id'), `${value}\n`);
  return value;
}

/** A tiny faithful profile with one scaffold developer message (and `extraTools` after its tool); returns its path. */
export function writeFaithfulProfile(dir: string, extraTools: readonly object[] = []): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'faithful-profile.json');
  const profile = {
    model: 'ignored-model',
    instructions: 'Profile instructions for tests.',
    tools: [
      {
        type: 'function',
        name: 'profile_tool',
        description: 'From the profile.',
        parameters: { type: 'object', properties: {} },
      },
      ...extraTools,
    ],
    tool_choice: 'auto',
    parallel_tool_calls: false,
    include: ['reasoning.encrypted_content'],
    scaffold: [
      {
        type: 'message',
        role: 'developer',
        content: [
          {
            type: 'input_text',
            text: '<env><current_date>1999-01-01</current_date><timezone>Nowhere/Zone</timezone></env>',
          },
        ],
      },
    ],
  };
  fs.writeFileSync(file, JSON.stringify(profile, null, 2));
  return file;
}

// ── Upstream event frames (docs/upstream/provider-a.md §11.5) ─────────────────────────────────────────────

/** Usage in the Responses shape. */
export interface FixtureUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens?: number;
  input_tokens_details?: { cached_tokens: number };
  output_tokens_details?: { reasoning_tokens: number };
}

export const DEFAULT_USAGE: FixtureUsage = { input_tokens: 12, output_tokens: 5, total_tokens: 17 };

const frame = (event: Record<string, unknown>, delayMs?: number): FakeFrame =>
  delayMs === undefined ? { event } : { event, delayMs };

/** `response.created` — marks the turn accepted. */
export function created(id = 'resp_t1', model = 'gpt-5.6-sol'): FakeFrame {
  return frame({ type: 'response.created', response: { id, model } });
}

/** `response.output_text.delta`. */
export function textDelta(delta: string, itemId = 'msg_1', delayMs?: number): FakeFrame {
  return frame({ type: 'response.output_text.delta', item_id: itemId, delta }, delayMs);
}

/** `response.reasoning_summary_text.delta`. */
export function reasoningDelta(delta: string, summaryIndex = 0): FakeFrame {
  return frame({ type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', summary_index: summaryIndex, delta });
}

/** `response.output_item.done` of a message item (text that never came as deltas). */
export function messageDone(text: string, itemId = 'msg_1'): FakeFrame {
  return frame({
    type: 'response.output_item.done',
    item: { id: itemId, type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] },
  });
}

export interface CallItemOptions {
  /** Upstream item id; default `fc_<callId>`. */
  itemId?: string;
  outputIndex?: number;
  /** Split the arguments into this many delta events (default 1; 0 = no deltas). */
  fragments?: number;
  /** Omit the final `response.output_item.done` (an open call at completion). */
  omitDone?: boolean;
}

function split(text: string, parts: number): string[] {
  if (parts <= 0) return [];
  const size = Math.ceil(text.length / parts) || 1;
  const pieces: string[] = [];
  for (let index = 0; index < text.length; index += size) pieces.push(text.slice(index, index + size));
  return pieces.length > 0 ? pieces : [''];
}

/**
 * A whole function call as the backend streams it: `output_item.added`, argument deltas,
 * `function_call_arguments.done`, `output_item.done` (spread it into `frames`).
 */
export function functionCallItem(
  callId: string,
  name: string,
  args: string,
  options: CallItemOptions = {},
): FakeFrame[] {
  const itemId = options.itemId ?? `fc_${callId}`;
  const outputIndex = options.outputIndex ?? 1;
  const frames: FakeFrame[] = [
    frame({
      type: 'response.output_item.added',
      output_index: outputIndex,
      item: { id: itemId, type: 'function_call', call_id: callId, name, arguments: '' },
    }),
    ...split(args, options.fragments ?? 1).map((delta) =>
      frame({ type: 'response.function_call_arguments.delta', item_id: itemId, output_index: outputIndex, delta }),
    ),
    frame({
      type: 'response.function_call_arguments.done',
      item_id: itemId,
      output_index: outputIndex,
      arguments: args,
    }),
  ];
  if (!options.omitDone) {
    frames.push(
      frame({
        type: 'response.output_item.done',
        output_index: outputIndex,
        item: { id: itemId, type: 'function_call', call_id: callId, name, arguments: args },
      }),
    );
  }
  return frames;
}

/** A whole custom (freeform) tool call: added, input deltas, input done, output_item.done. */
export function customToolCallItem(
  callId: string,
  name: string,
  input: string,
  options: CallItemOptions = {},
): FakeFrame[] {
  const itemId = options.itemId ?? `ctc_${callId}`;
  const outputIndex = options.outputIndex ?? 1;
  const frames: FakeFrame[] = [
    frame({
      type: 'response.output_item.added',
      output_index: outputIndex,
      item: { id: itemId, type: 'custom_tool_call', call_id: callId, name, input: '' },
    }),
    ...split(input, options.fragments ?? 1).map((delta) =>
      frame({ type: 'response.custom_tool_call_input.delta', item_id: itemId, output_index: outputIndex, delta }),
    ),
    frame({ type: 'response.custom_tool_call_input.done', item_id: itemId, output_index: outputIndex, input }),
  ];
  if (!options.omitDone) {
    frames.push(
      frame({
        type: 'response.output_item.done',
        output_index: outputIndex,
        item: { id: itemId, type: 'custom_tool_call', call_id: callId, name, input },
      }),
    );
  }
  return frames;
}

/** `response.completed` with usage (default prompt 12, completion 5, total 17). */
export function completed(
  usage: FixtureUsage | null = DEFAULT_USAGE,
  id = 'resp_t1',
  model = 'gpt-5.6-sol',
): FakeFrame {
  return frame({
    type: 'response.completed',
    response: { id, model, status: 'completed', ...(usage ? { usage } : {}) },
  });
}

/** `response.incomplete` (`max_output_tokens` → finish `length`, `content_filter`). */
export function incomplete(reason = 'max_output_tokens', usage: FixtureUsage | null = null, id = 'resp_t3'): FakeFrame {
  return frame({
    type: 'response.incomplete',
    response: { id, status: 'incomplete', incomplete_details: { reason }, ...(usage ? { usage } : {}) },
  });
}

/** `response.failed` with an error code (default `server_error`). */
export function failed(
  code = 'server_error',
  message = 'boom',
  id = 'resp_t2',
  usage: FixtureUsage | null = null,
): FakeFrame {
  return frame({
    type: 'response.failed',
    response: { id, status: 'failed', error: { code, message }, ...(usage ? { usage } : {}) },
  });
}

export interface ErrorEventOptions {
  status?: number;
  /** `error.type` (e.g. `usage_limit_reached`). */
  type?: string;
  /** `error.code` (e.g. `context_length_exceeded`, `rate_limit_exceeded`). */
  code?: string;
  message?: string;
  resetsInSeconds?: number;
}

/** A top-level `error` event (`{"type":"error","status":…,"error":{…}}`). */
export function errorEvent(options: ErrorEventOptions = {}): FakeFrame {
  const error: Record<string, unknown> = { message: options.message ?? 'error' };
  if (options.type) error.type = options.type;
  if (options.code) error.code = options.code;
  if (options.resetsInSeconds !== undefined) error.resets_in_seconds = options.resetsInSeconds;
  return frame({ type: 'error', ...(options.status !== undefined ? { status: options.status } : {}), error });
}

/** A usage-limit error event (docs/upstream/provider-a.md §11.5): status 429, `usage_limit_reached`, `resets_in_seconds`. */
export function usageLimitEvent(resetsInSeconds = 30): FakeFrame {
  return errorEvent({ status: 429, type: 'usage_limit_reached', message: 'limit', resetsInSeconds });
}

/** A `codex.rate_limits` telemetry event. */
export function rateLimitsEvent(primaryUsedPercent: number, primaryResetAt: number): FakeFrame {
  return frame({
    type: 'codex.rate_limits',
    rate_limits: { primary: { used_percent: primaryUsedPercent, window_minutes: 300, reset_at: primaryResetAt } },
  });
}

/** What the plan's meter says on an answer (docs/upstream/provider-a.md §4.3). */
export interface PlanMeter {
  readonly primaryUsedPercent?: number;
  readonly primaryResetAt?: number;
  readonly secondaryUsedPercent?: number;
  readonly secondaryResetAt?: number;
  /** `x-codex-credits-*`; absent = not sent. */
  readonly credits?: { hasCredits: boolean; unlimited?: boolean; balance?: string };
  readonly reachedType?: string;
}

/** The `x-codex-*` window and credit headers of one answer, as the backend sends them. */
export function planHeaders(meter: PlanMeter): Record<string, string> {
  const headers: Record<string, string> = {};
  if (meter.primaryUsedPercent !== undefined) {
    headers['x-codex-primary-used-percent'] = meter.primaryUsedPercent.toFixed(1);
    headers['x-codex-primary-window-minutes'] = '300';
    if (meter.primaryResetAt !== undefined) headers['x-codex-primary-reset-at'] = String(meter.primaryResetAt);
  }
  if (meter.secondaryUsedPercent !== undefined) {
    headers['x-codex-secondary-used-percent'] = meter.secondaryUsedPercent.toFixed(1);
    headers['x-codex-secondary-window-minutes'] = '10080';
    if (meter.secondaryResetAt !== undefined) headers['x-codex-secondary-reset-at'] = String(meter.secondaryResetAt);
  }
  if (meter.credits) {
    headers['x-codex-credits-has-credits'] = String(meter.credits.hasCredits);
    headers['x-codex-credits-unlimited'] = String(meter.credits.unlimited ?? false);
    if (meter.credits.balance !== undefined) headers['x-codex-credits-balance'] = meter.credits.balance;
  }
  if (meter.reachedType) headers['x-codex-rate-limit-reached-type'] = meter.reachedType;
  return headers;
}

/** A whole successful reply: created, one text delta, completed (with `usage`). */
export function textReply(text: string, usage: FixtureUsage | null = DEFAULT_USAGE): FakeScript {
  return { frames: [created(), textDelta(text), completed(usage)] };
}

// ── Gateway settings ────────────────────────────────────────────────────────────────────────

export interface ProviderASettingsOptions {
  /** `ws` (default) uses `fake.wsUrl`, `sse` uses `fake.httpUrl`. */
  transport?: 'ws' | 'sse';
  /** Options for the auth file written under `<home>/.codex`. */
  auth?: AuthFileOptions;
}

/**
 * Writes a valid login under `<home>/.codex/auth.json` and returns the settings that point a
 * gateway (`startGateway({...providerASettings(fake, home), GATEWAY_PROVIDERS: 'provider_a'})`)
 * at the fake: `PROVIDER_A_URL`, `PROVIDER_A_TOKEN_URL`, `PROVIDER_A_AUTH_FILE`, `CODEX_HOME`.
 */
export function providerASettings(
  fake: FakeProviderA,
  home: string,
  options: ProviderASettingsOptions = {},
): Record<string, string> {
  const codexHome = path.join(home, '.codex');
  const auth = writeAuthFile(codexHome, options.auth);
  return {
    PROVIDER_A_URL: options.transport === 'sse' ? fake.httpUrl : fake.wsUrl,
    PROVIDER_A_TOKEN_URL: fake.tokenUrl,
    PROVIDER_A_AUTH_FILE: auth.path,
    CODEX_HOME: codexHome,
    // The live model list is off unless a spec is about it: a background fetch at startup would
    // refresh an expired test login before the spec scripts its token endpoint answers.
    PROVIDER_A_MODELS_REFRESH: '0',
  };
}

// ── Adapter-level harness ───────────────────────────────────────────────────────────────────

const fixtureCatalog = ModelCatalog.load(undefined, ['provider_a']);

/** A ChatRequest for `modelId` (default `gpt-5.6-sol`) saying "hi", with any field overridden. */
export function providerAChatRequest(overrides: Partial<ChatRequest> & { modelId?: string } = {}): ChatRequest {
  const { modelId, ...rest } = overrides;
  return chatRequestFor(modelId ?? 'gpt-5.6-sol', rest);
}

/** The resolved catalog row of a provider_a id (for ExtractionRequest.model). */
export function providerAModel(modelId: string): ResolvedModel {
  const model = fixtureCatalog.resolve(modelId);
  if (!model) throw new Error(`unknown model ${modelId}`);
  return model;
}

/** A CallContext with a fresh signal (or the given one) and a recording logger. */
export function callContext(
  signal: AbortSignal = new AbortController().signal,
  logger: EventLogger = recordingLogger(),
): CallContext {
  return { signal, requestId: 'req-test', logger };
}

/** Drains an event iterable. */
export async function collectEvents(events: AsyncIterable<ChatEvent>): Promise<ChatEvent[]> {
  const result: ChatEvent[] = [];
  for await (const event of events) result.push(event);
  return result;
}

/** The error a promise rejected with (fails when it resolved). */
export async function rejectionOf(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (error) {
    return error as GatewayError;
  }
  throw new Error('expected a rejection');
}
