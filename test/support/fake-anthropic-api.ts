import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback fake of the Anthropic Messages API, for running the real `claude` binary offline
 * (docs/providers.md). Point the CLI at it with `ANTHROPIC_BASE_URL`. It answers what Claude Code 2.1.332
 * asks for: `HEAD /api/hello` (reachability) and `POST /v1/messages?beta=true` (the turn), and
 * the gateway's read of `GET /api/oauth/usage` (the answer set by `usage`, refused 401 without a
 * bearer token); any other route is recorded and answered 404 in Anthropic's error shape.
 *
 * Each `POST /v1/messages` plays the next scripted reply (the last one repeats) of the script
 * whose marker its body contains (`scriptFor`, so concurrent tests can share one fake), else of
 * the default script (`script`): a Messages SSE
 * stream (`message_start`, `content_block_start`, `content_block_delta` with `text_delta` /
 * `thinking_delta` / `signature_delta`, `content_block_stop`, `message_delta`, `message_stop`,
 * with the `event:` names and a `ping` as the real API sends them) or an error with the real API's
 * body `{"type":"error","error":{type,message},"request_id"}` and headers. A request without
 * `"stream": true` (Claude Code's non-streaming retry of a stream that broke) gets the same reply
 * as one JSON message, as the real API answers it. Without a bearer token
 * or API key the request is refused with 401 `authentication_error`, like the real API; below a
 * minimum Claude Code version (`requireClientVersion`, read from the `claude-cli/<version>`
 * user agent as the real API reads it) with its 400 `claude_code_version_too_old`.
 *
 * Every answer carries the unified rate-limit headers of the subscription's meters (`meter`, or a
 * reply's own `meters`): the plan's status and windows and the extra usage ("overage") behind it,
 * named as Claude Code 2.1.332 reads them (docs/upstream/provider-c.md "Plan meters").
 */

/** The state of a meter as the unified headers say it. */
export type FakeMeterStatus = 'allowed' | 'allowed_warning' | 'rejected';

/** One plan window of the unified headers (`5h`, `7d`). */
export interface FakeWindowMeter {
  readonly status?: FakeMeterStatus;
  /** Unix seconds. */
  readonly reset?: number;
  /** Share of the window used (1.0 = spent; above 1 when the plan overshoots). */
  readonly utilization?: number;
  readonly surpassedThreshold?: number;
}

/**
 * The subscription's meters as the API reports them on every answer to an OAuth login:
 * `anthropic-ratelimit-unified-status` (the plan as a whole; `rejected` = spent), `-reset`,
 * `-representative-claim` (the window that limits: `five_hour`, `seven_day`, `overage`…), the
 * per-window `-5h-*` / `-7d-*` headers, and the extra usage behind the plan (`-overage-*`).
 */
export interface FakeUnifiedMeters {
  readonly status?: FakeMeterStatus;
  readonly reset?: number;
  readonly representativeClaim?: string;
  readonly windows?: { readonly '5h'?: FakeWindowMeter; readonly '7d'?: FakeWindowMeter };
  readonly overage?: {
    readonly status?: FakeMeterStatus;
    readonly reset?: number;
    /** `out_of_credits`, `org_level_disabled`, `member_level_disabled`, … */
    readonly disabledReason?: string;
    readonly inUse?: boolean;
    readonly utilization?: number;
    readonly surpassedThreshold?: number;
  };
}

/** What every answer carried before meters were scripted: the plan allowed, nothing else. */
const DEFAULT_METERS: FakeUnifiedMeters = { status: 'allowed' };

/** The response headers of `meters`, with the names Claude Code 2.1.332 reads. */
export function unifiedRateLimitHeaders(meters: FakeUnifiedMeters): Record<string, string> {
  const prefix = 'anthropic-ratelimit-unified-';
  const headers: Record<string, string> = {};
  const put = (name: string, value: string | number | boolean | undefined) => {
    if (value !== undefined) headers[prefix + name] = String(value);
  };
  put('status', meters.status);
  put('reset', meters.reset);
  put('representative-claim', meters.representativeClaim);
  for (const [key, window] of Object.entries(meters.windows ?? {})) {
    if (!window) continue;
    put(`${key}-status`, window.status);
    put(`${key}-reset`, window.reset);
    put(`${key}-utilization`, window.utilization);
    put(`${key}-surpassed-threshold`, window.surpassedThreshold);
  }
  const overage = meters.overage;
  if (overage) {
    put('overage-status', overage.status);
    put('overage-reset', overage.reset);
    put('overage-disabled-reason', overage.disabledReason);
    put('overage-in-use', overage.inUse);
    put('overage-utilization', overage.utilization);
    put('overage-surpassed-threshold', overage.surpassedThreshold);
  }
  return headers;
}

/** One content block of a streamed answer; `deltas` are sent as separate SSE events. */
export interface FakeBlock {
  readonly kind: 'text' | 'thinking';
  readonly deltas: readonly string[];
}

export interface FakeStreamReply {
  readonly type: 'stream';
  readonly blocks: readonly FakeBlock[];
  /** `end_turn` unless given (`max_tokens`, `refusal`, …). */
  readonly stopReason?: string;
  readonly usage?: {
    readonly input_tokens: number;
    readonly output_tokens: number;
    readonly cache_read_input_tokens?: number;
    readonly cache_creation_input_tokens?: number;
  };
  /** Wait this long between two deltas. */
  readonly deltaDelayMs?: number;
  /** After the blocks' deltas, keep the response open (no stop events) until the client leaves. */
  readonly hang?: boolean;
  /**
   * Before the first block (the response's head and `message_start` sent), hold the answer until
   * this settles: its first word comes when the test says so, not after a guessed delay.
   */
  readonly thinkUntil?: Promise<unknown>;
  /**
   * After the blocks, hold the stop events until this settles: the answer ends when the test says
   * so (a turn that keeps its process slot until then), not after a guessed delay.
   */
  readonly holdUntil?: Promise<unknown>;
  /**
   * After the last block's deltas (the blocks before it complete), an SSE `error` event (what the
   * API sends when it fails mid-answer), then the end. Asked without streaming, the reply is that error as an HTTP error
   * (`FAIL_MIDWAY_STATUS`).
   */
  readonly failMidway?: { readonly errorType: string; readonly message: string };
  /** This answer's meters instead of the fake's (`meter`). */
  readonly meters?: FakeUnifiedMeters;
  /**
   * Sent as an event stream even to a request without `"stream": true` (a proxy that forces
   * streaming): Claude Code reports its non-streaming retry as answered with a malformed response.
   */
  readonly alwaysStream?: boolean;
}

export interface FakeErrorReply {
  readonly type: 'error';
  /** 401, 429, 500, 529, … */
  readonly status: number;
  /** Anthropic's error type: `authentication_error`, `rate_limit_error`, `overloaded_error`, `api_error`, … */
  readonly errorType: string;
  readonly message: string;
  /** The API's machine-readable cause, sent as `error.details.error_code` (`claude_code_version_too_old`). */
  readonly errorCode?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export type FakeReply = FakeStreamReply | FakeErrorReply;

/** A request the fake received; `closedEarly` turns true when the client hung up before the reply ended. */
export interface FakeApiRequest {
  readonly method: string;
  readonly path: string;
  /** Whether an `Authorization: Bearer` / `x-api-key` credential was sent (never its value). */
  readonly hadCredential: boolean;
  /** The account of a test token `fake-account-<name>` (docs/accounts.md e2e), else undefined. */
  readonly account?: string;
  /** The `anthropic-beta` and `user-agent` headers as sent (never the credential). */
  readonly beta?: string;
  readonly userAgent?: string;
  readonly body: any;
  closedEarly: boolean;
}

/** What `GET /api/oauth/usage` answers: a 200 with `body`, or an error status. */
export type FakeUsageAnswer = { readonly body: unknown } | { readonly status: number };

/**
 * A usage answer in the shape Claude Code 2.1.332 reads (docs/upstream/provider-c.md "The usage
 * endpoint"): the five-hour window at `fiveHour` % resetting at `resetsAt`, the week at 20 %, and
 * the extra usage behind the plan enabled or not.
 */
export function usageAnswer(fiveHour: number, resetsAt: number, extraUsageEnabled: boolean): { body: unknown } {
  return {
    body: {
      five_hour: { utilization: fiveHour, resets_at: new Date(resetsAt).toISOString() },
      seven_day: { utilization: 20, resets_at: new Date(resetsAt + 4 * 86_400_000).toISOString() },
      seven_day_oauth_apps: null,
      seven_day_opus: null,
      seven_day_sonnet: { utilization: 3, resets_at: null },
      extra_usage: extraUsageEnabled
        ? { is_enabled: true, monthly_limit: 5000, used_credits: 120, utilization: 2.4, currency: 'USD' }
        : { is_enabled: false, monthly_limit: null, used_credits: null, utilization: null },
    },
  };
}

/**
 * Anthropic's refusals of a subscription request it classifies as a third-party app while the
 * account's extra usage is off or spent (HTTP 400 `invalid_request_error`), in each wording users
 * reported: the plain one, the April one offering a credit, the organisation's, and extra usage
 * spent (docs/upstream/provider-c.md "The third-party refusal").
 */
export const THIRD_PARTY_MESSAGES = {
  plain:
    'Third-party apps now draw from your extra usage, not your plan limits. Add more at claude.ai/settings/usage and keep going.',
  credit:
    "Third-party apps now draw from your extra usage, not your plan limits. We've added a $20 credit to get you started. Claim it at claude.ai/settings/usage and keep going.",
  organization:
    "Third-party apps now draw from extra usage, not plan limits. We've added a credit to your organization to get you started. Ask your workspace admin to claim it and keep going.",
  outOfExtraUsage: "You're out of extra usage. Add more at claude.ai/settings/usage and keep going.",
} as const;

/**
 * Anthropic's refusal of a conversation past 200,000 tokens to a model Claude Code gives a
 * 1,000,000-token window, from a subscription login without extra usage: HTTP 429
 * `rate_limit_error` without the unified meter headers (it is no meter). `extraUsage` is the
 * wording users reported; `usageCredits` the other one Claude Code 2.1.332 recognises (its binary
 * matches "Extra usage is required for long context" or "Usage credits are required for long
 * context").
 */
export const LONG_CONTEXT_MESSAGES = {
  extraUsage: 'Extra usage is required for long context requests.',
  usageCredits: 'Usage credits are required for long context requests.',
} as const;

/** The errors the real API sends for each failure the gateway must tell apart. */
export const API_ERRORS = {
  unauthorized: (): FakeErrorReply => ({
    type: 'error',
    status: 401,
    errorType: 'authentication_error',
    message: 'Invalid bearer token',
  }),
  /**
   * A spent credit: the API's 400 with the one message Claude Code 2.1.332 knows for it (its
   * binary matches `^Your credit balance is too low to access the Anthropic API\. Please go to
   * Plans & Billing to upgrade or purchase credits\.$` and any error whose text contains "credit
   * balance is too low", and reports `error: "billing_error"`, "Credit balance is too low"): how
   * a spent usage credit of a login reaches the CLI (docs/troubleshooting.md).
   */
  creditTooLow: (): FakeErrorReply => ({
    type: 'error',
    status: 400,
    errorType: 'invalid_request_error',
    message:
      'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.',
  }),
  /**
   * The API's version gate (since 2026-09): a model it serves only to newer Claude Code builds,
   * refused with 400 `invalid_request_error`, the client's and the required version in the text
   * and `details.error_code: "claude_code_version_too_old"`, which Claude Code 2.1.332 reports as
   * `api_error`.
   */
  clientTooOld: (clientVersion: string, requiredVersion: string): FakeErrorReply => ({
    type: 'error',
    status: 400,
    errorType: 'invalid_request_error',
    message: `Claude Code ${clientVersion} does not support this model; version ${requiredVersion} or newer is required. Run 'claude update', or update the Claude desktop app, then try again.`,
    errorCode: 'claude_code_version_too_old',
  }),
  /** A subscription limit: rejected with a reset time (epoch seconds) as the API reports it. */
  limit: (resetEpochSeconds: number): FakeErrorReply => ({
    type: 'error',
    status: 429,
    errorType: 'rate_limit_error',
    message: "This request would exceed your account's rate limit. Please try again later.",
    headers: {
      'retry-after': String(Math.max(1, resetEpochSeconds - Math.floor(Date.now() / 1000))),
      'anthropic-ratelimit-unified-status': 'rejected',
      'anthropic-ratelimit-unified-reset': String(resetEpochSeconds),
      'anthropic-ratelimit-unified-representative-claim': 'five_hour',
      'anthropic-ratelimit-unified-5h-status': 'rejected',
      'anthropic-ratelimit-unified-5h-reset': String(resetEpochSeconds),
      'anthropic-ratelimit-unified-5h-utilization': '1.0',
    },
  }),
  /**
   * A short-term rate limit: 429 `rate_limit_error` without the unified meter headers (no meter
   * refused it). Claude Code 2.1.332 reports it as "Server is temporarily limiting requests (not
   * your usage limit)" and prints a `rate_limit_event` with only `status: rejected`.
   */
  temporaryLimit: (): FakeErrorReply => ({
    type: 'error',
    status: 429,
    errorType: 'rate_limit_error',
    message: 'Number of request tokens has exceeded your per-minute rate limit',
  }),
  /**
   * All usage of the login's organization paused at its daily cap: 429 with the unified status
   * `rejected` and `overage-daily-cap-paused: true` only, no window or reset. Claude Code 2.1.332
   * reports it as `api_error: "usage_limit_reached"` with `dailyCapPaused: true` and "Usage is
   * paused for your organization. …", and prints a `rate_limit_event` with `status: rejected` and
   * `dailyCapPaused: true` (read from its binary and run against this fake; docs/upstream/provider-c.md §12.6).
   */
  dailyCapPaused: (): FakeErrorReply => ({
    type: 'error',
    status: 429,
    errorType: 'rate_limit_error',
    message: "This request would exceed your account's rate limit. Please try again later.",
    headers: {
      'anthropic-ratelimit-unified-status': 'rejected',
      'anthropic-ratelimit-unified-overage-daily-cap-paused': 'true',
    },
  }),
  /** The third-party refusal in one of its wordings (THIRD_PARTY_MESSAGES). */
  thirdParty: (wording: keyof typeof THIRD_PARTY_MESSAGES = 'plain'): FakeErrorReply => ({
    type: 'error',
    status: 400,
    errorType: 'invalid_request_error',
    message: THIRD_PARTY_MESSAGES[wording],
  }),
  /** The long-context refusal in one of its wordings (LONG_CONTEXT_MESSAGES). */
  longContext: (wording: keyof typeof LONG_CONTEXT_MESSAGES = 'extraUsage'): FakeErrorReply => ({
    type: 'error',
    status: 429,
    errorType: 'rate_limit_error',
    message: LONG_CONTEXT_MESSAGES[wording],
  }),
  overloaded: (): FakeErrorReply => ({
    type: 'error',
    status: 529,
    errorType: 'overloaded_error',
    message: 'Overloaded',
  }),
  internal: (): FakeErrorReply => ({
    type: 'error',
    status: 500,
    errorType: 'api_error',
    message: 'Internal server error',
  }),
} as const;

/** A text answer in `pieces` (one `text_delta` each). */
export function textReply(pieces: string | readonly string[], usage?: FakeStreamReply['usage']): FakeStreamReply {
  return {
    type: 'stream',
    blocks: [{ kind: 'text', deltas: typeof pieces === 'string' ? [pieces] : pieces }],
    ...(usage ? { usage } : {}),
  };
}

/**
 * An answer of thinking only: a thinking block in `pieces`, then an empty text block, the way the
 * API ends a turn the model spent thinking. Claude Code 2.1.332 asks such an answer once more
 * within the same run (a note asking for a user-visible response), so a script whose last reply is
 * this one is asked twice.
 */
export function thinkingOnlyReply(
  pieces: string | readonly string[],
  usage?: FakeStreamReply['usage'],
): FakeStreamReply {
  return {
    type: 'stream',
    blocks: [
      { kind: 'thinking', deltas: typeof pieces === 'string' ? [pieces] : pieces },
      { kind: 'text', deltas: [] },
    ],
    ...(usage ? { usage } : {}),
  };
}

/** Dotted numeric versions compared part by part (`2.1.99` < `2.1.280`). */
function compareVersions(a: string, b: string): number {
  const left = a.split('.').map(Number);
  const right = b.split('.').map(Number);
  for (let index = 0; index < Math.max(left.length, right.length); index++) {
    const difference = (left[index] ?? 0) - (right[index] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

const requestId = () => `req_${randomBytes(12).toString('hex')}`;
const messageId = () => `msg_${randomBytes(12).toString('hex')}`;

/** The HTTP status the real API gives each error type that `failMidway` sends (500 for any other). */
const FAIL_MIDWAY_STATUS: Readonly<Record<string, number>> = {
  overloaded_error: 529,
  rate_limit_error: 429,
  api_error: 500,
};

interface Script {
  readonly replies: readonly FakeReply[];
  played: number;
}

export class FakeAnthropicApi {
  readonly requests: FakeApiRequest[] = [];
  private defaultScript: Script = { replies: [], played: 0 };
  private readonly markedScripts = new Map<string, Script>();
  private readonly open = new Set<http.ServerResponse>();
  private readonly minimumClientVersions = new Map<string | undefined, string>();
  private meters: FakeUnifiedMeters | undefined;
  private usageAnswerSet: FakeUsageAnswer | undefined;
  private tokenFailureStatus: number | undefined;

  private constructor(
    private readonly server: http.Server,
    readonly baseUrl: string,
  ) {}

  static async start(replies: readonly FakeReply[] = []): Promise<FakeAnthropicApi> {
    let fake: FakeAnthropicApi | undefined;
    const server = http.createServer((request, response) => void fake!.handle(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    fake = new FakeAnthropicApi(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    fake.script(replies);
    return fake;
  }

  /** Replaces the default replies and forgets what was received; the next `POST /v1/messages` plays the first. */
  script(replies: readonly FakeReply[]): void {
    this.defaultScript = { replies: [...replies], played: 0 };
    this.requests.length = 0;
  }

  /** Appends replies to the default script (played after those already scripted). */
  enqueue(...replies: FakeReply[]): void {
    this.defaultScript = { replies: [...this.defaultScript.replies, ...replies], played: this.defaultScript.played };
  }

  /** Replies for the requests whose body contains `marker` (e.g. a unique word in the prompt). */
  scriptFor(marker: string, replies: readonly FakeReply[]): void {
    this.markedScripts.set(marker, { replies: [...replies], played: 0 });
  }

  /**
   * Refuses `model` (every model when omitted) to Claude Code builds below `minimum`, as the real
   * API does: the version is the one the CLI names in its `claude-cli/<version>` user agent.
   */
  requireClientVersion(minimum: string, model?: string): void {
    this.minimumClientVersions.set(model, minimum);
  }

  /**
   * The subscription's meters from now on: their unified headers go on every answer (an error's
   * own headers win). Without a call, streamed answers say only `status: allowed`.
   */
  meter(meters: FakeUnifiedMeters | undefined): void {
    this.meters = meters;
  }

  /** What `GET /api/oauth/usage` answers from now on; unset, it is a 404 like any unknown route. */
  usage(answer: FakeUsageAnswer | undefined): void {
    this.usageAnswerSet = answer;
  }

  /** The `GET /api/oauth/usage` requests received (since the last `script()`). */
  usageReads(): FakeApiRequest[] {
    return this.requests.filter((request) => request.path === '/api/oauth/usage');
  }

  /**
   * What `POST /v1/oauth/token` answers from now on: `status` with an empty JSON object (the
   * endpoint failing), or, undefined, renewed tokens.
   */
  tokenFailure(status: number | undefined): void {
    this.tokenFailureStatus = status;
  }

  /** The OAuth refresh grants received (their JSON bodies). */
  tokenGrants(): any[] {
    return this.requests.filter((request) => request.path === '/v1/oauth/token').map((request) => request.body);
  }

  /** The `POST /v1/messages` requests received (since the last `script()`), or those containing `marker`. */
  messages(marker?: string): FakeApiRequest[] {
    return this.requests.filter(
      (request) =>
        request.method === 'POST' &&
        request.path === '/v1/messages' &&
        (marker === undefined || JSON.stringify(request.body).includes(marker)),
    );
  }

  async close(): Promise<void> {
    for (const response of this.open) response.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', this.baseUrl);
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown = text;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      // Kept as text.
    }
    const hadCredential =
      /^Bearer \S/.test(request.headers.authorization ?? '') || typeof request.headers['x-api-key'] === 'string';
    const account = /^Bearer fake-account-([\w-]+)$/.exec(request.headers.authorization ?? '')?.[1];
    const recorded: FakeApiRequest = {
      method: request.method ?? '',
      path: url.pathname,
      hadCredential,
      account,
      beta: ([] as string[]).concat(request.headers['anthropic-beta'] ?? []).join(',') || undefined,
      userAgent: request.headers['user-agent'],
      body,
      closedEarly: false,
    };
    this.requests.push(recorded);
    if (url.pathname === '/v1/oauth/token' && request.method === 'POST') {
      // The OAuth refresh grant of a config directory's login (the CLI's token endpoint, moved here by PROVIDER_C_TOKEN_URL).
      if (this.tokenFailureStatus !== undefined) {
        response.writeHead(this.tokenFailureStatus, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      const grant = body as { refresh_token?: string } | undefined;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          access_token: `${String(grant?.refresh_token)}-renewed`,
          refresh_token: `${String(grant?.refresh_token)}-next`,
          expires_in: 28_800,
          scope: 'user:inference user:profile',
        }),
      );
      return;
    }
    if (url.pathname === '/api/hello') {
      response.writeHead(200, { 'content-type': 'application/json' }).end(request.method === 'HEAD' ? undefined : '{}');
      return;
    }
    if (url.pathname === '/api/oauth/usage' && request.method === 'GET' && this.usageAnswerSet) {
      const answer = this.usageAnswerSet;
      if (!/^Bearer \S/.test(request.headers.authorization ?? '')) {
        this.sendError(response, {
          type: 'error',
          status: 401,
          errorType: 'authentication_error',
          message: 'Invalid bearer token',
        });
      } else if ('status' in answer) {
        this.sendError(response, { type: 'error', status: answer.status, errorType: 'api_error', message: 'Error' });
      } else {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
      }
      return;
    }
    if (request.method !== 'POST' || url.pathname !== '/v1/messages') {
      this.sendError(response, { type: 'error', status: 404, errorType: 'not_found_error', message: 'Not found' });
      return;
    }
    if (!hadCredential) {
      this.sendError(response, {
        type: 'error',
        status: 401,
        errorType: 'authentication_error',
        message: 'x-api-key header is required',
      });
      return;
    }
    const model =
      typeof (body as { model?: unknown })?.model === 'string' ? (body as { model: string }).model : undefined;
    const clientVersion = /\bclaude-cli\/(\d+(?:\.\d+)*)/.exec(request.headers['user-agent'] ?? '')?.[1] ?? '0';
    const minimum = this.minimumClientVersions.get(model) ?? this.minimumClientVersions.get(undefined);
    if (minimum !== undefined && compareVersions(clientVersion, minimum) < 0) {
      this.sendError(response, API_ERRORS.clientTooOld(clientVersion, minimum));
      return;
    }
    const serialized = JSON.stringify(body);
    const script = [...this.markedScripts].find(([marker]) => serialized.includes(marker))?.[1] ?? this.defaultScript;
    const reply = script.replies[Math.min(script.played++, script.replies.length - 1)] ?? textReply('ok');
    if (reply.type === 'error') {
      this.sendError(response, reply);
      return;
    }
    const streamed = (body as { stream?: unknown })?.stream === true || reply.alwaysStream === true;
    if (reply.failMidway && !streamed) {
      const { errorType, message } = reply.failMidway;
      this.sendError(response, { type: 'error', status: FAIL_MIDWAY_STATUS[errorType] ?? 500, errorType, message });
      return;
    }
    this.open.add(response);
    response.on('close', () => {
      this.open.delete(response);
      if (!response.writableFinished) recorded.closedEarly = true;
    });
    if (streamed) await this.stream(response, reply, model ?? 'claude-fable-5');
    else this.whole(response, reply, model ?? 'claude-fable-5');
  }

  private sendError(response: http.ServerResponse, reply: FakeErrorReply): void {
    const id = requestId();
    response.writeHead(reply.status, {
      'content-type': 'application/json',
      'request-id': id,
      ...(this.meters ? unifiedRateLimitHeaders(this.meters) : {}),
      ...(reply.headers ?? {}),
    });
    response.end(
      JSON.stringify({
        type: 'error',
        error: {
          type: reply.errorType,
          message: reply.message,
          ...(reply.errorCode === undefined ? {} : { details: { error_code: reply.errorCode } }),
        },
        request_id: id,
      }),
    );
  }

  /** A reply's usage: 12 tokens in and 6 out unless it says otherwise. */
  private static usageOf(reply: FakeStreamReply) {
    return {
      input_tokens: 12,
      output_tokens: 6,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
      ...(reply.usage ?? {}),
    };
  }

  /** A non-streaming answer: the reply's blocks whole in one JSON message (a `hang` reply never answers). */
  private whole(response: http.ServerResponse, reply: FakeStreamReply, model: string): void {
    if (reply.hang) return; // Left open: the client's disconnect is what ends it.
    response.writeHead(200, {
      'content-type': 'application/json',
      'request-id': requestId(),
      ...unifiedRateLimitHeaders(reply.meters ?? this.meters ?? DEFAULT_METERS),
    });
    response.end(
      JSON.stringify({
        id: messageId(),
        type: 'message',
        role: 'assistant',
        model,
        content: reply.blocks.map((block) =>
          block.kind === 'text'
            ? { type: 'text', text: block.deltas.join('') }
            : { type: 'thinking', thinking: block.deltas.join(''), signature: randomBytes(24).toString('base64') },
        ),
        stop_reason: reply.stopReason ?? 'end_turn',
        stop_sequence: null,
        usage: FakeAnthropicApi.usageOf(reply),
      }),
    );
  }

  private async stream(response: http.ServerResponse, reply: FakeStreamReply, model: string): Promise<void> {
    const usage = FakeAnthropicApi.usageOf(reply);
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'request-id': requestId(),
      ...unifiedRateLimitHeaders(reply.meters ?? this.meters ?? DEFAULT_METERS),
    });
    const send = (event: Record<string, unknown>) => {
      if (!response.destroyed) response.write(`event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`);
    };
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    send({
      type: 'message_start',
      message: {
        id: messageId(),
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: usage.input_tokens,
          cache_creation_input_tokens: usage.cache_creation_input_tokens,
          cache_read_input_tokens: usage.cache_read_input_tokens,
          output_tokens: 1,
        },
      },
    });
    send({ type: 'ping' });
    if (reply.thinkUntil) await reply.thinkUntil;
    for (const [index, block] of reply.blocks.entries()) {
      send({
        type: 'content_block_start',
        index,
        content_block:
          block.kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' },
      });
      for (const piece of block.deltas) {
        if (reply.deltaDelayMs) await pause(reply.deltaDelayMs);
        send({
          type: 'content_block_delta',
          index,
          delta:
            block.kind === 'text' ? { type: 'text_delta', text: piece } : { type: 'thinking_delta', thinking: piece },
        });
      }
      if (block.kind === 'thinking')
        send({
          type: 'content_block_delta',
          index,
          delta: { type: 'signature_delta', signature: randomBytes(24).toString('base64') },
        });
      if (reply.hang) return; // Left open: the client's disconnect is what ends it.
      if (reply.failMidway && index === reply.blocks.length - 1) {
        send({ type: 'error', error: { type: reply.failMidway.errorType, message: reply.failMidway.message } });
        response.end();
        return;
      }
      send({ type: 'content_block_stop', index });
    }
    if (reply.holdUntil) await reply.holdUntil;
    send({
      type: 'message_delta',
      delta: { stop_reason: reply.stopReason ?? 'end_turn', stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    });
    send({ type: 'message_stop' });
    response.end();
  }
}

/**
 * The fake Anthropic API for a spec file or describe block: started once, its scripted answers,
 * meters and usage answer cleared before each test, and a private HOME for the real CLI made
 * fresh for each test.
 *
 * A test's HOME is removed when the next test starts, or after the last one, not in an `afterEach`
 * of its own: Jest runs a block's `afterEach` hooks in the order they were declared, so one here
 * would run before the spec's own `afterEach` that closes the gateway, while a `claude` child of
 * that gateway may still be writing its session files into the HOME.
 */
export function useFakeAnthropicApi(homePrefix: string): { api(): FakeAnthropicApi; home(): string } {
  let api: FakeAnthropicApi | undefined;
  let home: string | undefined;
  const removeHome = () => {
    if (home !== undefined) fs.rmSync(home, { recursive: true, force: true });
    home = undefined;
  };
  beforeAll(async () => {
    api = await FakeAnthropicApi.start();
  });
  afterAll(async () => {
    removeHome();
    await api?.close();
  });
  beforeEach(() => {
    removeHome();
    home = fs.mkdtempSync(path.join(os.tmpdir(), homePrefix));
    api!.script([]);
    api!.meter(undefined);
    api!.usage(undefined);
  });
  const notStarted = (): never => {
    throw new Error('useFakeAnthropicApi: used outside a hook or test');
  };
  return { api: () => api ?? notStarted(), home: () => home ?? notStarted() };
}
