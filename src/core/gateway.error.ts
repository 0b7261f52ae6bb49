import { ErrorCode, errorSpec, ErrorSpec } from './error-codes';

export interface GatewayErrorOptions {
  /** Public message replacing the table's (our own words only; never upstream text). */
  publicMessage?: string;
  /** The request field the error is about: OpenAI's `error.param` on chat routes (e.g. `n`, `response_format`). */
  param?: string;
  /** Structured `error.details` (invalid_schema, unsupported_model, output_validation_failed). */
  details?: string[];
  /** Retry-After hint in seconds (rounded up, at least 1, when written). */
  retryAfterSeconds?: number;
  /** Internal detail for logs only; never sent to a client. Must not contain secrets or prompts. */
  detail?: string;
  /** Upstream HTTP status, for logs and retry decisions. */
  upstreamStatus?: number;
  /** Whether an adapter may retry this failure before output began. */
  retryable?: boolean;
  cause?: unknown;
}

/** The one error type services throw; the global filter and the SSE writer render it. */
export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly publicMessage?: string;
  readonly param?: string;
  readonly details?: string[];
  readonly retryAfterSeconds?: number;
  readonly detail?: string;
  readonly upstreamStatus?: number;
  readonly retryable: boolean;

  constructor(code: ErrorCode, options: GatewayErrorOptions = {}) {
    super(options.detail ? `${code}: ${options.detail}` : code, { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.publicMessage = options.publicMessage;
    this.param = options.param;
    this.details = options.details;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.detail = options.detail;
    this.upstreamStatus = options.upstreamStatus;
    this.retryable = options.retryable ?? false;
  }

  static isInstance(value: unknown): value is GatewayError {
    return value instanceof GatewayError;
  }

  get spec(): ErrorSpec {
    return errorSpec(this.code);
  }

  /** Retry-After to send: the hint, else the table default; whole seconds, at least 1. */
  get retryAfterHeader(): number | undefined {
    const seconds = this.retryAfterSeconds ?? this.spec.retryAfterSeconds;
    return seconds === undefined ? undefined : Math.max(1, Math.ceil(seconds));
  }
}

/** The abort reason used when a client disconnects (an Error subclass, not a plain object). */
export class ClientDisconnectedError extends Error {
  constructor() {
    super('client disconnected');
    this.name = 'ClientDisconnectedError';
  }
}
