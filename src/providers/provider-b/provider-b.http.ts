import { GatewayError } from '../../core/gateway.error';
import type { EventLogger } from '../../core/event-logger';
import { readJsonCapped } from '../shared/http-body';
import { withinIdleTimeout } from '../shared/idle-timeout';
import type { ProviderBCredential, ProviderBTokenSource } from './provider-b.auth';
import { PROVIDER_B_USER_AGENT } from './provider-b.constants';
import { classifyProviderBError } from './provider-b.errors';
import type { ProviderBTurn } from './provider-b.turn';

/** Everything one turn needs to call `v1internal`. */
export interface CodeAssistClient {
  readonly baseUrl: string;
  readonly tokens: ProviderBTokenSource;
  readonly turn: ProviderBTurn;
  /** GATEWAY_STREAM_IDLE_TIMEOUT: bound on each wait for the upstream before its body, the login token and the response headers (0 = off). */
  readonly headerTimeoutMs: number;
  readonly logger: EventLogger;
}

/** A 2xx response plus a handle that aborts this one fetch (idle timeout, cleanup). */
export interface OpenedResponse {
  readonly response: Response;
  abort(reason?: unknown): void;
}

export type CodeAssistMethod = 'streamGenerateContent' | 'generateContent' | 'loadCodeAssist' | 'onboardUser';

/** Bound on an error body we read before classifying it; a larger body is classified by status alone. */
const MAX_ERROR_BODY_BYTES = 256 * 1024;

/**
 * POST `{base}:<method>` with the login's bearer (provider_b.md §5). A 401 drops the token,
 * recovers one (file or forced refresh) and retries the same call once (§3); this does not count
 * against the generic retry budget. Any other non-2xx becomes a classified GatewayError (§10).
 */
export async function postCodeAssist(client: CodeAssistClient, method: CodeAssistMethod, body: unknown): Promise<OpenedResponse> {
  const { tokens, logger } = client;
  const credential = await loginToken(client);
  let opened = await send(client, method, body, credential.accessToken);
  if (opened.response.status === 401) {
    await discard(opened);
    logger.info({ event: 'provider_b_auth_retry', method }, 'provider_b_auth_retry');
    const recovered = await loginToken(client, (signal) => tokens.recover(credential.accessToken, signal, logger));
    opened = await send(client, method, body, recovered.accessToken);
    if (opened.response.status === 401) {
      await discard(opened);
      throw new GatewayError('auth', { detail: `provider_b ${method} rejected the refreshed token`, upstreamStatus: 401 });
    }
  }
  if (!opened.response.ok) {
    const errorBody = await readJsonCapped(opened.response, MAX_ERROR_BODY_BYTES);
    throw classifyProviderBError(opened.response.status, errorBody);
  }
  return opened;
}

/**
 * The login token for the next call, waited for like any upstream answer: under the turn's signal
 * (deadline, client) and the idle bound, so a hung token endpoint cannot hold the request longer.
 */
export function loginToken(
  client: CodeAssistClient,
  fetch: (signal: AbortSignal) => Promise<ProviderBCredential> = (signal) => client.tokens.current(signal, client.logger),
): Promise<ProviderBCredential> {
  return withinIdleTimeout(client.headerTimeoutMs, client.turn.signal, 'login token', fetch);
}

/** Reads a small JSON answer (discovery, `:generateContent`); non-JSON is a retryable upstream error. */
export async function readJsonResponse(opened: OpenedResponse, turn: ProviderBTurn): Promise<unknown> {
  let text: string;
  try {
    text = await opened.response.text();
  } catch (error) {
    throw turn.normalize(error);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new GatewayError('upstream', { detail: 'provider_b answered with non-JSON', retryable: true });
  }
}

async function send(client: CodeAssistClient, method: CodeAssistMethod, body: unknown, accessToken: string): Promise<OpenedResponse> {
  const controller = new AbortController();
  const stream = method === 'streamGenerateContent';
  const url = `${client.baseUrl.replace(/\/+$/, '')}:${method}${stream ? '?alt=sse' : ''}`;
  const headerTimer =
    client.headerTimeoutMs > 0
      ? setTimeout(() => controller.abort(new GatewayError('timeout', { detail: `provider_b ${method}: no response headers` })), client.headerTimeoutMs)
      : undefined;
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${accessToken}`,
        'Content-Type': 'application/json',
        'User-Agent': PROVIDER_B_USER_AGENT,
        Accept: stream ? 'text/event-stream' : 'application/json',
      },
      body: JSON.stringify(body),
      signal: AbortSignal.any([client.turn.signal, controller.signal]),
    });
    return { response, abort: (reason?: unknown) => controller.abort(reason) };
  } catch (error) {
    if (controller.signal.aborted && !client.turn.signal.aborted) throw controller.signal.reason;
    throw client.turn.normalize(error);
  } finally {
    clearTimeout(headerTimer);
  }
}

async function discard(opened: OpenedResponse): Promise<void> {
  await opened.response.body?.cancel().catch(() => undefined);
}
