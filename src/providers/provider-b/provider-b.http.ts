import { linkedAbort } from '../../common/async/abortable';
import type { EventLogger } from '../../core/event-logger';
import { GatewayError } from '../../core/gateway.error';
import { lowerCaseHeaders, readBodyWithin, readJsonCapped } from '../../common/egress/http-body';
import { providerFetch } from '../../common/egress/upstream-proxy';
import type { UpstreamProxy } from '../../common/egress/upstream-proxy';
import { GOOG_API_CLIENT, providerBUserAgent } from './provider-b.constants';
import { UpstreamRefusal } from '../shared/upstream-failure';
import { connectionCause } from '../shared/connection-failure';

/**
 * The turn a call belongs to (docs/upstream/provider-b.md §9.5): its signal aborts when the client leaves (with
 * the client's own reason) or the turn deadline passes (a `timeout` GatewayError). Everything a
 * turn waits on — token refresh, discovery, fetches, retry sleeps — listens to it.
 */
export interface TurnScope {
  readonly signal: AbortSignal;
  /** Epoch ms; Infinity when unbounded. */
  readonly deadlineAt: number;
}

/**
 * What a failure means to the caller: the signal's reason once it aborted, else the failure as it
 * is (a transport error is classified with the rest, `classifyProviderBFailure`).
 */
function turnFailure(scope: TurnScope, error: unknown): unknown {
  return scope.signal.aborted ? (scope.signal.reason ?? error) : error;
}

/**
 * Everything one attempt needs to call `v1internal`. Its waits are bounded by the turn runner
 * (deadline and GATEWAY_STREAM_IDLE_TIMEOUT, through `turn.signal`), not here.
 */
export interface CodeAssistClient {
  readonly baseUrl: string;
  /** The login's token for this attempt (a 401 is the runner's `reopenAfter`, docs/accounts.md). */
  readonly accessToken: string;
  readonly turn: TurnScope;
  readonly logger: EventLogger;
  /** The turn's model as the CLI names it in the User-Agent of every call (`cliModelId`, not the backend's id). */
  readonly model: string;
  /** The egress proxy (HTTPS_PROXY / HTTP_PROXY / NO_PROXY); absent = direct. */
  readonly proxy?: UpstreamProxy;
}

/** A 2xx response plus a handle that aborts this one fetch (idle timeout, cleanup). */
export interface OpenedResponse {
  readonly response: Response;
  abort(reason?: unknown): void;
}

export type CodeAssistMethod =
  'streamGenerateContent' | 'generateContent' | 'loadCodeAssist' | 'onboardUser' | 'retrieveUserQuota';

/** One Code Assist call: `POST {base}:<method>` with a JSON body, or `GET {base}/<operation name>`. */
export type CodeAssistCall =
  { readonly method: CodeAssistMethod; readonly body: unknown } | { readonly operation: string };

/** Bound on an error body we read before classifying it; a larger body is classified by status alone. */
const MAX_ERROR_BODY_BYTES = 256 * 1024;
/**
 * Bound on a JSON success body (discovery answers, a whole `:generateContent` turn). A turn's
 * text is at most the model's output limit (64 Ki tokens, a few hundred KiB); 16 MiB leaves
 * room for thoughts and tool arguments while a broken upstream cannot make us buffer forever.
 */
export const MAX_JSON_BODY_BYTES = 16 * 1024 * 1024;

/** POST `{base}:<method>`; see `callCodeAssist`. */
export function postCodeAssist(
  client: CodeAssistClient,
  method: CodeAssistMethod,
  body: unknown,
): Promise<OpenedResponse> {
  return callCodeAssist(client, { method, body });
}

/**
 * One call with the login's bearer (docs/providers.md, provider_b). Any non-2xx rejects with a
 * `UpstreamRefusal` (its status, headers and error body), which the family classifies
 * (`classifyProviderBFailure`; a 401 is `auth`, answered with one forced refresh of the login and
 * a new attempt).
 */
export async function callCodeAssist(client: CodeAssistClient, call: CodeAssistCall): Promise<OpenedResponse> {
  const opened = await send(client, call);
  if (!opened.response.ok) {
    const errorBody = await readJsonCapped(opened.response, MAX_ERROR_BODY_BYTES);
    throw new UpstreamRefusal(opened.response.status, errorBody, lowerCaseHeaders(opened.response.headers));
  }
  return opened;
}

/**
 * Reads a JSON answer (discovery, `:generateContent`) of at most MAX_JSON_BODY_BYTES; non-JSON
 * is a retryable upstream error, a larger body a non-retryable one (it would be as large again).
 */
export async function readJsonResponse(
  opened: OpenedResponse,
  turn: TurnScope,
  maxBytes = MAX_JSON_BODY_BYTES,
): Promise<unknown> {
  let text: string | undefined;
  try {
    text = await readBodyWithin(opened.response, maxBytes);
  } catch (error) {
    throw turnFailure(turn, error);
  }
  if (text === undefined)
    throw new GatewayError('upstream', { detail: `provider_b answer larger than ${maxBytes} bytes` });
  try {
    return JSON.parse(text);
  } catch {
    throw new GatewayError('upstream', { detail: 'provider_b answered with non-JSON', retryable: true });
  }
}

async function send(client: CodeAssistClient, call: CodeAssistCall): Promise<OpenedResponse> {
  // The call's own signal: the turn's, plus the caller's abort of the body.
  const ownAbort = linkedAbort([client.turn.signal]);
  const base = client.baseUrl.replace(/\/+$/, '');
  const stream = 'method' in call && call.method === 'streamGenerateContent';
  const url =
    'method' in call
      ? `${base}:${call.method}${stream ? '?alt=sse' : ''}`
      : `${base}/${call.operation.replace(/^\/+/, '')}`;
  try {
    // The headers the pinned CLI sends (captured): its JSON calls accept JSON, its stream call `*/*`.
    // Through the egress proxy unless NO_PROXY says otherwise.
    const response = await providerFetch(
      url,
      {
        method: 'method' in call ? 'POST' : 'GET',
        headers: {
          Accept: stream ? '*/*' : 'application/json',
          // fetch decodes br as well; the CLI's HTTP library offers all three.
          'Accept-Encoding': 'gzip, deflate, br',
          Authorization: `Bearer ${client.accessToken}`,
          'Content-Type': 'application/json',
          'User-Agent': providerBUserAgent(client.model),
          'x-goog-api-client': GOOG_API_CLIENT,
        },
        ...('method' in call ? { body: JSON.stringify(call.body) } : {}),
        signal: ownAbort.signal,
      },
      client.proxy,
    );
    return { response, abort: (reason?: unknown) => ownAbort.abort(reason) };
  } catch (error) {
    if (client.turn.signal.aborted) throw turnFailure(client.turn, error);
    // Nothing came back: the log line names the errno, the host, the proxy and the fix.
    throw new GatewayError('upstream', {
      detail: 'provider_b connection failed',
      retryable: true,
      cause: error,
      upstream: connectionCause(error, { url, setting: 'PROVIDER_B_URL', proxy: client.proxy }),
    });
  }
}
