/**
 * THE error table: every internal error code → HTTP status, the OpenAI-shaped `type`/`code`
 * used on chat and models routes, the structured-inference contract code, the text of the
 * in-stream error chunk, and the public message. Messages are ours; upstream text, prompts and
 * arguments never reach a client. docs/error-codes.md is checked against this table by a test.
 *
 * The codes every family may raise are here; a code only one family raises is a row of that
 * family's `errors` table (core/family.ts), which the registry merges into the same lookup.
 */
import type { FamilyMessageParts } from './family';
import { familyOf, families } from './family-registry';
import type { ProviderId } from './provider-id';

interface ErrorSpecCommon {
  /** HTTP status on chat/models routes (and the default on structured). */
  readonly status: number;
  /** OpenAI `error.type`. */
  readonly type: string;
  /** OpenAI `error.code`. */
  readonly openaiCode: string;
  /** Text inside `[error: …]` when the failure happens after SSE headers were sent. */
  readonly streamText: string;
  /** Public message. */
  readonly message: string;
  /** Retry-After seconds when nothing more precise is known (429 and 503 always carry one). */
  readonly retryAfterSeconds?: number;
  /** A failure of (or reported by) the upstream: counted in `gateway_chat_api_upstream_errors_total`. */
  readonly upstream?: true;
  /**
   * The upstream refuses the kind of account behind the login, not its token: the account pool
   * marks the login `account_unsupported` until its file changes, and the turn is not moved (every
   * login of that kind gets the same answer).
   */
  readonly refusesAccount?: true;
  /**
   * Part of the gateway's normal operation, not a fault of the request, the gateway or an upstream
   * (a drain's refusal): the request's lines are written at info whatever the status (answerLogLevel).
   */
  readonly routine?: true;
}

/** An error the structured route answers in its contract's shape. */
interface StructuredAnsweredSpec extends ErrorSpecCommon {
  /** Structured-inference contract code (docs/error-codes.md). */
  readonly structuredCode: StructuredErrorCode;
  /** Status on the structured route when it differs from `status`. */
  readonly structuredStatus?: number;
  readonly openaiShapeOnly?: never;
}

/**
 * An error answered in the OpenAI shape on every path, the structured one included: a request
 * Node's parser refused before any route, or a path no route serves (a disabled structured route
 * is indistinguishable from an unknown one). No contract code applies.
 */
interface OpenAiShapeOnlySpec extends ErrorSpecCommon {
  readonly openaiShapeOnly: true;
  readonly structuredCode?: never;
  readonly structuredStatus?: never;
}

export type ErrorSpec = StructuredAnsweredSpec | OpenAiShapeOnlySpec;

export type StructuredErrorCode =
  | 'auth_error'
  | 'unsupported_model'
  | 'invalid_schema'
  | 'invalid_request'
  | 'rate_limited'
  | 'unavailable'
  | 'timeout'
  | 'upstream_error'
  | 'output_validation_failed'
  | 'idempotency_conflict';

const STRUCTURED_STATUS: Record<StructuredErrorCode, number> = {
  auth_error: 401,
  unsupported_model: 404,
  invalid_schema: 400,
  invalid_request: 400,
  rate_limited: 429,
  unavailable: 503,
  timeout: 504,
  upstream_error: 502,
  output_validation_failed: 422,
  idempotency_conflict: 409,
};

export function structuredStatus(code: StructuredErrorCode): number {
  return STRUCTURED_STATUS[code];
}

/** The HTTP status of an error on the structured route (the OpenAI answer's for one it never answers in its shape). */
export function structuredHttpStatus(spec: ErrorSpec): number {
  if (spec.openaiShapeOnly) return spec.status;
  return spec.structuredStatus ?? structuredStatus(spec.structuredCode);
}

/** The codes shared by every family and the gateway itself. */
export const CORE_ERROR_CODES = {
  // ── Gateway-side (inbound) ────────────────────────────────────────────────────────────────
  invalid_request: {
    status: 400,
    type: 'invalid_request_error',
    openaiCode: 'invalid_request',
    structuredCode: 'invalid_request',
    streamText: 'invalid request',
    message: 'the request is invalid',
  },
  unsupported_parameter: {
    status: 400,
    type: 'invalid_request_error',
    openaiCode: 'unsupported_parameter',
    structuredCode: 'invalid_request',
    streamText: 'unsupported parameter',
    message: 'a request parameter is not supported by this model',
  },
  request_too_large: {
    status: 413,
    type: 'invalid_request_error',
    openaiCode: 'request_too_large',
    structuredCode: 'invalid_request',
    structuredStatus: 400,
    streamText: 'request too large',
    message: 'the request body exceeds the maximum size',
  },
  headers_too_large: {
    status: 431,
    type: 'invalid_request_error',
    openaiCode: 'request_header_fields_too_large',
    openaiShapeOnly: true,
    streamText: 'request headers too large',
    message: 'the request headers exceed the maximum size',
  },
  request_timeout: {
    status: 408,
    type: 'invalid_request_error',
    openaiCode: 'request_timeout',
    openaiShapeOnly: true,
    streamText: 'request timeout',
    message: 'the request did not arrive in time',
  },
  invalid_api_key: {
    status: 401,
    type: 'authentication_error',
    openaiCode: 'invalid_api_key',
    structuredCode: 'auth_error',
    streamText: 'authentication failed',
    message:
      "missing or invalid bearer token: send `Authorization: Bearer <the gateway's key>`, the value of GATEWAY_BEARER_SECRET on the gateway",
  },
  model_not_found: {
    status: 404,
    type: 'invalid_request_error',
    openaiCode: 'model_not_found',
    structuredCode: 'unsupported_model',
    streamText: 'model not found',
    message: 'the model does not exist or is not enabled; GET /v1/models lists the models this gateway serves',
  },
  route_not_found: {
    status: 404,
    type: 'invalid_request_error',
    openaiCode: 'not_found',
    openaiShapeOnly: true,
    streamText: 'not found',
    message: 'no such route',
  },
  responses_api_not_served: {
    status: 404,
    type: 'invalid_request_error',
    openaiCode: 'not_found',
    openaiShapeOnly: true,
    streamText: 'not found',
    message:
      'this gateway serves OpenAI Chat Completions (POST /v1/chat/completions), not the Responses API: ' +
      'switch the client to Chat Completions (openai SDK: client.chat.completions; AI SDK: ' +
      'createOpenAICompatible(...).chatModel(id); LangChain.js: ChatOpenAICompletions instead of ChatOpenAI; ' +
      'Continue cn: a model alias such as sol; see docs/clients.md)',
  },
  queue_full: {
    status: 429,
    type: 'rate_limit_error',
    openaiCode: 'queue_full',
    structuredCode: 'rate_limited',
    streamText: 'rate limited',
    message: 'too many requests are waiting; retry in 5 s',
    retryAfterSeconds: 5,
  },
  queue_timeout: {
    status: 429,
    type: 'rate_limit_error',
    openaiCode: 'queue_timeout',
    structuredCode: 'rate_limited',
    streamText: 'rate limited',
    message: 'timed out waiting for a free slot; retry in 5 s',
    retryAfterSeconds: 5,
  },
  draining: {
    status: 503,
    type: 'service_unavailable',
    openaiCode: 'service_unavailable',
    structuredCode: 'unavailable',
    streamText: 'service unavailable',
    message: 'the gateway is shutting down; retry on another instance',
    retryAfterSeconds: 5,
    routine: true,
  },
  // Request bodies held in memory at once are bounded (GATEWAY_MAX_BODY_BYTES_IN_FLIGHT) so a few
  // large ones cannot take the process past its memory limit. The body's reader answers it with the
  // bound in bytes beside the setting's first mention (http-middleware.ts, budgetFullMessage).
  body_budget_full: {
    status: 503,
    type: 'service_unavailable',
    openaiCode: 'service_unavailable',
    structuredCode: 'unavailable',
    streamText: 'service unavailable',
    message:
      'the gateway holds as many request bodies in memory as GATEWAY_MAX_BODY_BYTES_IN_FLIGHT allows; retry in 5 s, or have the gateway\'s operator raise GATEWAY_MAX_BODY_BYTES_IN_FLIGHT together with the container\'s memory limit (docs/deployment.md "Memory budget")',
    retryAfterSeconds: 5,
  },
  internal: {
    status: 500,
    type: 'server_error',
    openaiCode: 'internal_error',
    structuredCode: 'upstream_error',
    structuredStatus: 502,
    streamText: 'internal error',
    message: 'internal error',
  },
  // ── Upstream (classified by adapters, docs/design/behaviours.md §2) ──────────────────────────────
  // Chat answers 403 permission_error, not 401: a 401 makes SDKs raise AuthenticationError and
  // agents tell the user to check their API key, while the fix is the gateway's upstream login.
  auth: {
    status: 403,
    type: 'permission_error',
    openaiCode: 'upstream_login_required',
    structuredCode: 'auth_error',
    structuredStatus: 401,
    streamText: 'authentication failed',
    message:
      "the gateway's upstream login is missing or was refused (not your API key); log in again with the provider's CLI on the gateway's machine",
    upstream: true,
  },
  rate_limited: {
    status: 429,
    type: 'rate_limit_error',
    openaiCode: 'rate_limit_exceeded',
    structuredCode: 'rate_limited',
    streamText: 'rate limited',
    message: 'the upstream is rate limiting requests; retry later',
    retryAfterSeconds: 5,
    upstream: true,
  },
  usage_limit: {
    status: 429,
    type: 'rate_limit_error',
    openaiCode: 'usage_limit_reached',
    structuredCode: 'rate_limited',
    streamText: 'usage limit reached',
    message: 'the upstream usage limit was reached; retry after the reset',
    // A turn's limit with no reset known tells the account pool's rest of the login instead, which
    // follows ACCOUNT_COOLDOWN_DEFAULT (AccountTurn.finalError). This is only for a failure no pool
    // saw: the setting's default, longer than any client waits by itself (x-should-retry: false).
    retryAfterSeconds: 300,
    upstream: true,
  },
  // OpenAI's own answer for spent credit (429, type and code `insufficient_quota`): clients know it.
  usage_credit_exhausted: {
    status: 429,
    type: 'insufficient_quota',
    openaiCode: 'insufficient_quota',
    structuredCode: 'rate_limited',
    streamText: 'usage credit exhausted',
    message: "the upstream login's usage credit is used up; retry after it resets",
    // As for usage_limit: with no reset known a turn tells the pool's rest of the login.
    retryAfterSeconds: 3600,
    upstream: true,
  },
  // The upstream paused all usage of the login's organization at a spending cap of the
  // organization: not the login's plan, and only an admin of the organization (or the cap's reset)
  // lifts it. The account pool rests the login (`usage_paused`) for the Retry-After, an hour when no
  // reset is known: long enough not to send turns back to a login still paused, short enough to
  // take it back soon after an admin lifted the pause. `insufficient_quota`: a billing cap clients know.
  usage_paused: {
    status: 429,
    type: 'insufficient_quota',
    openaiCode: 'usage_paused',
    structuredCode: 'rate_limited',
    streamText: 'usage paused',
    message:
      "the upstream paused usage for the organization of the gateway's login, at a spending cap of the organization (not your API key, and not the login's plan); an admin of that organization can raise or lift the cap, or retry after it resets",
    retryAfterSeconds: 3600,
    upstream: true,
  },
  // The gateway's own refusal: the login's plan is spent and what would serve the turn is paid usage
  // the operator has not allowed (ACCOUNT_PAID_USAGE). No upstream is asked. The pool always gives
  // its wait (the plan's reset, else its rest of the login for ACCOUNT_COOLDOWN_DEFAULT).
  paid_usage_not_allowed: {
    status: 429,
    type: 'insufficient_quota',
    openaiCode: 'paid_usage_not_allowed',
    structuredCode: 'rate_limited',
    streamText: 'paid usage not allowed',
    message:
      "the login's plan limit is spent and the upstream would bill paid usage, which this gateway does not allow (ACCOUNT_PAID_USAGE); retry after the reset",
    retryAfterSeconds: 3600,
  },
  // The upstream bills this use of a subscription login as a third-party app, from paid usage that is off or spent.
  extra_usage_required: {
    status: 403,
    type: 'permission_error',
    openaiCode: 'extra_usage_required',
    structuredCode: 'auth_error',
    structuredStatus: 401,
    streamText: 'extra usage required',
    message:
      "the upstream bills this use from the account's extra usage, which is off or spent; the account owner can add extra usage on the vendor's usage page, or use another model family",
    upstream: true,
  },
  // On the structured route the upstream's refusals of the request stay the contract's
  // upstream_error 502, sent with x-should-retry: false: the same request meets the same refusal
  // (errorAnswer; docs/structured.md "Errors").
  context_window: {
    status: 400,
    type: 'invalid_request_error',
    openaiCode: 'context_length_exceeded',
    structuredCode: 'upstream_error',
    structuredStatus: 502,
    streamText: 'context window exceeded',
    message:
      'the conversation exceeds the context window of the model; shorten the conversation or start a new one, or choose a model with a larger context window (GET /v1/models lists `context_window` where the upstream reports it)',
    upstream: true,
  },
  bad_request: {
    status: 400,
    type: 'invalid_request_error',
    openaiCode: 'upstream_rejected_request',
    structuredCode: 'upstream_error',
    structuredStatus: 502,
    streamText: 'upstream rejected the request',
    message:
      "the upstream rejected the request as the gateway sent it; try again without unusual parameters, tools or attachments, or with another model from GET /v1/models. The gateway's operator finds the upstream's reason in the gateway log under this response's x-request-id",
    upstream: true,
  },
  not_found: {
    status: 404,
    type: 'invalid_request_error',
    openaiCode: 'model_not_found',
    structuredCode: 'upstream_error',
    structuredStatus: 502,
    streamText: 'model not found',
    message: 'the upstream does not know this model',
    upstream: true,
  },
  // Model refusals (docs/providers.md "Model errors"): the model is the problem, not the request or the login.
  // The family that raises one words its fix (`Family.messages`); these are the words without a family.
  model_requires_newer_client: {
    status: 400,
    type: 'invalid_request_error',
    openaiCode: 'model_requires_newer_client',
    structuredCode: 'unsupported_model',
    streamText: 'model requires a newer client',
    message:
      'the upstream serves this model only to a newer client than the one this gateway runs; choose another model from GET /v1/models',
    upstream: true,
  },
  model_not_entitled: {
    status: 403,
    type: 'permission_error',
    openaiCode: 'model_not_available_for_account',
    structuredCode: 'unsupported_model',
    streamText: 'model not available for this account',
    message:
      "the upstream does not serve this model to this login's plan; choose another model from GET /v1/models, or use a login whose plan includes it",
    upstream: true,
  },
  upstream: {
    status: 502,
    type: 'upstream_error',
    openaiCode: 'upstream_error',
    structuredCode: 'upstream_error',
    streamText: 'upstream error',
    message:
      "the upstream failed to answer; retry in a few seconds. If it keeps failing, the gateway's operator finds the cause in the gateway log under this response's x-request-id",
    upstream: true,
  },
  invalid_tool_call: {
    status: 502,
    type: 'upstream_error',
    openaiCode: 'invalid_tool_call',
    structuredCode: 'upstream_error',
    streamText: 'invalid upstream tool call',
    // The chat layer's own message names the call when it has one (ToolCallCollector.failure).
    message:
      "the upstream produced an invalid tool call, so none of the answer's tool calls was returned; send the request again, as the model may write a valid call on another try",
    upstream: true,
  },
  timeout: {
    status: 504,
    type: 'timeout',
    openaiCode: 'timeout',
    structuredCode: 'timeout',
    streamText: 'timeout',
    // The family's words name its own turn timeout (`Family.timeoutSetting`, `familyMessage`).
    message:
      "the upstream did not answer in time; retry, and if it keeps timing out, the gateway's operator can raise the model family's turn timeout (PROVIDER_*_TIMEOUT) or GATEWAY_STREAM_IDLE_TIMEOUT",
    upstream: true,
  },
  canceled: {
    status: 499,
    type: 'canceled',
    openaiCode: 'canceled',
    structuredCode: 'upstream_error',
    streamText: 'canceled',
    message: 'the client closed the request',
  },
  // ── Structured inference only (docs/error-codes.md) ─────────────────────────────────────────
  unsupported_model: {
    status: 404,
    type: 'invalid_request_error',
    openaiCode: 'model_not_found',
    structuredCode: 'unsupported_model',
    streamText: 'model not found',
    message: 'model is not enabled for structured inference',
  },
  invalid_schema: {
    status: 400,
    type: 'invalid_request_error',
    openaiCode: 'invalid_schema',
    structuredCode: 'invalid_schema',
    streamText: 'invalid schema',
    message: 'schema uses unsupported constructs',
  },
  output_validation_failed: {
    status: 422,
    type: 'upstream_error',
    openaiCode: 'output_validation_failed',
    structuredCode: 'output_validation_failed',
    streamText: 'output validation failed',
    message: 'the model output did not satisfy the schema; retry with a fresh idempotency_key',
  },
  idempotency_conflict: {
    status: 409,
    type: 'invalid_request_error',
    openaiCode: 'idempotency_conflict',
    structuredCode: 'idempotency_conflict',
    streamText: 'idempotency conflict',
    message: 'idempotency_key was already used with different inference parameters',
  },
  idempotency_store_full: {
    status: 503,
    type: 'service_unavailable',
    openaiCode: 'service_unavailable',
    structuredCode: 'unavailable',
    streamText: 'service unavailable',
    message: 'the idempotency store is full of live bindings; retry later',
    retryAfterSeconds: 5,
  },
} as const satisfies Record<string, ErrorSpec>;

/**
 * The codes families add, each declared by its family's folder as a member of this interface
 * (a module augmentation beside the family's `errors` table), so shared code and the family's own
 * `new GatewayError(code)` type-check while core names none of them.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by the families' augmentations
export interface FamilyErrorCodes {}

export type CoreErrorCode = keyof typeof CORE_ERROR_CODES;
export type ErrorCode = CoreErrorCode | keyof FamilyErrorCodes;

/**
 * A wait in whole seconds as a person reads it: `40 s` below two minutes, then minutes (`12 min`),
 * then hours and minutes (`5 h 3 min`), never shorter than the seconds given.
 */
export function formatWait(seconds: number): string {
  const whole = Math.max(1, Math.ceil(seconds));
  if (whole < 120) return `${whole} s`;
  const minutes = Math.ceil(whole / 60);
  if (minutes < 120) return `${minutes} min`;
  return minutes % 60 === 0 ? `${minutes / 60} h` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/**
 * The client's message of a turn refused for its login: the family, its CLI and `command`, the
 * family's login command or, for a login its CLI does not keep by default, the login's own
 * (AccountLogin.loginCommand).
 */
export function loginRequiredMessage(provider: ProviderId, command: string): string {
  return `${provider} has no usable ${familyOf(provider).fix.cli} login on the gateway (this is not about your API key): ${command}; the gateway picks the new login up without a restart`;
}

/**
 * The public message of a failure of a known family, naming its CLI and the command that fixes
 * it; undefined when the table's generic message is all there is to say. A 429's message says when
 * whenever the gateway knows: the reset the upstream reported (`resetsAt`, epoch ms) and the wait
 * its Retry-After carries (`retryAfterSeconds`: the header's own whole seconds, when not a default).
 * A family words a code its own way through `Family.messages`, given the same parts.
 */
export function familyMessage(
  code: ErrorCode,
  provider: ProviderId | undefined,
  resetsAt?: number,
  retryAfterSeconds?: number,
): string | undefined {
  if (provider === undefined) return undefined;
  const family = familyOf(provider);
  const fix = family.fix;
  const reset =
    resetsAt !== undefined && Number.isFinite(resetsAt) ? ` (resets ${new Date(resetsAt).toISOString()})` : '';
  // The retry clause when the wait is known (a moved turn's is the pool's, not this login's reset);
  // each case says its own words when it is not.
  const retry =
    retryAfterSeconds !== undefined
      ? `retry in ${formatWait(retryAfterSeconds)}`
      : reset === ''
        ? undefined
        : 'retry after the reset';
  const own = family.messages?.[code];
  if (own !== undefined) return own({ provider, fix, reset, retry });
  switch (code) {
    case 'auth':
      return loginRequiredMessage(provider, fix.login);
    case 'usage_credit_exhausted':
      return `${provider}: the usage credit of this ${fix.cli} login is used up${reset}; ${retry ?? 'wait for the reset'} or add another login`;
    case 'usage_limit':
      return `${provider}: this ${fix.cli} login reached its usage limit${reset}; ${retry ?? 'retry after the reset'}, or add another login`;
    case 'rate_limited':
      return `${provider}: the upstream is rate limiting this ${fix.cli} login${reset}; ${retry ?? 'retry later'}`;
    case 'usage_paused':
      return `${provider}: the upstream paused usage for the organization of this ${fix.cli} login, at a spending cap of the organization (the login's plan is not spent); an admin of that organization can raise or lift the cap, else usage resumes when the cap resets${reset}; ${retry ?? 'retry after it resets'}, or add a login of another organization`;
    case 'timeout':
      return family.timeoutSetting === undefined
        ? undefined
        : `${provider}: the upstream did not answer in time; retry, and if it keeps timing out, the gateway's operator can raise ${family.timeoutSetting} (the longest a turn may take) or GATEWAY_STREAM_IDLE_TIMEOUT (the longest wait for the upstream's next event)`;
    case 'paid_usage_not_allowed':
      return fix.paidUsage
        ? `${provider}: this ${fix.cli} login's plan limit is spent${reset} and the upstream would now bill ${fix.paidUsage.name}, which this gateway does not spend unless the operator sets ACCOUNT_PAID_USAGE=allow; ${retry ?? 'retry after the reset'}, add another login, or manage paid usage at ${fix.paidUsage.page}`
        : undefined;
    default:
      return undefined;
  }
}

/** The level a request's lines are written at. */
export type AnswerLogLevel = 'info' | 'warn' | 'error';

/**
 * The one rule for the level of a request's lines (its `chat_completion` or `structured_*` record
 * and its access line), from the status it was answered with and, when it failed, its code: error
 * for a 5xx, warn for any other 4xx, info otherwise. A client that left (499) and a `routine`
 * refusal (a drain's 503) are info: they are how the gateway is meant to work, and an error line
 * for each would page someone for every rollout.
 */
export function answerLogLevel(status: number, code?: ErrorCode): AnswerLogLevel {
  if (code !== undefined && errorSpec(code).routine) return 'info';
  if (status >= 500) return 'error';
  return status >= 400 && status !== 499 ? 'warn' : 'info';
}

/** The row of a code: the core table's, or the family's that declares it. */
declare module './family' {
  interface Family {
    /**
     * The error codes only this family raises, with their rows as in the core table (status, OpenAI
     * type and code, structured code, stream text, message). `errorSpec` and `errorTable` read them
     * beside the core table; each code is also declared as a member of `FamilyErrorCodes` by a
     * module augmentation beside the table, so `new GatewayError(code)` type-checks. A code may be
     * declared once: by core or by one family.
     */
    readonly errors?: Readonly<Record<string, ErrorSpec>>;
    /**
     * The family's own wording of a code's public message, where the generic one in `familyMessage`
     * would not say the family's facts (a vendor's billing, a CLI's install); undefined leaves the
     * table's message.
     */
    readonly messages?: { readonly [C in ErrorCode]?: (parts: FamilyMessageParts) => string | undefined };
  }
}

/** The row of a code a registered family declares. */
function familyErrorSpec(code: string): ErrorSpec | undefined {
  for (const family of families()) {
    const spec = family.errors?.[code];
    if (spec !== undefined) return spec;
  }
  return undefined;
}

export function errorSpec(code: ErrorCode): ErrorSpec {
  const spec = (CORE_ERROR_CODES as Readonly<Record<string, ErrorSpec>>)[code] ?? familyErrorSpec(code);
  if (spec === undefined) throw new Error(`no error code "${code}" is declared`);
  return spec;
}

/** Every code with its row: the core table's, then each registered family's (docs/error-codes.md lists them all). */
export function errorTable(): ReadonlyMap<ErrorCode, ErrorSpec> {
  const table = new Map<ErrorCode, ErrorSpec>(Object.entries(CORE_ERROR_CODES) as [ErrorCode, ErrorSpec][]);
  for (const family of families())
    for (const [code, spec] of Object.entries(family.errors ?? {})) {
      if (table.has(code as ErrorCode))
        throw new Error(`family "${family.id}" declares error code "${code}", which another table already has`);
      table.set(code as ErrorCode, spec);
    }
  return table;
}

/**
 * The codes an upstream failure of one family can carry (rows marked `upstream`): the core
 * table's and the family's own. A closed set per family: `GatewayMetrics` starts each at zero.
 */
export function upstreamErrorCodes(provider: ProviderId): ErrorCode[] {
  const rows = { ...(CORE_ERROR_CODES as Readonly<Record<string, ErrorSpec>>), ...familyOf(provider).errors };
  return Object.entries(rows)
    .filter(([, spec]) => spec.upstream === true)
    .map(([code]) => code as ErrorCode);
}
