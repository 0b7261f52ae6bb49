import { sha256Hex } from '../../common/auth/caller';
import { GatewayError } from '../../common/errors/gateway.error';
import { sanitizeIdentifier } from '../../common/logging/sanitize';
import type { EventLogger } from '../provider-adapter';
import { readJsonObject, writeJsonFileAtomic } from '../shared/credential-file';
import { GEMINI_CLI_CLIENT_ID, GEMINI_CLI_CLIENT_SECRET, TOKEN_EXPIRY_MARGIN_MS, TOKEN_REQUEST_TIMEOUT_MS } from './provider-b.constants';
import { awaitUnlessAborted } from './provider-b.turn';

/** A usable access token plus a stable, non-secret key of the login it belongs to. */
export interface ProviderBCredential {
  readonly accessToken: string;
  /** Hash of the refresh token (else of the access token): a different login rediscovers its project. */
  readonly loginKey: string;
  /** Epoch ms; undefined when the file had no `expiry_date`. */
  readonly expiresAt?: number;
}

interface CredentialFile {
  readonly raw: Record<string, unknown>;
  readonly accessToken?: string;
  readonly refreshToken?: string;
  readonly expiresAt?: number;
}

const MAX_TOKEN_RESPONSE_BYTES = 1024 * 1024;
const nonEmpty = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/**
 * The Gemini CLI login file as a token source (provider_b.md §1–§3): lazy read, refresh when
 * expired, write-back that keeps unknown fields, and one refresh in flight at a time (concurrent
 * requests await the same promise). Token values never reach logs or errors.
 */
export class ProviderBTokenSource {
  private cached?: ProviderBCredential;
  private inFlight?: Promise<ProviderBCredential>;

  constructor(
    private readonly authFile: string,
    private readonly tokenUrl: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** §2.3: cached token, else the file's, else a refresh. */
  async current(signal: AbortSignal, logger: EventLogger): Promise<ProviderBCredential> {
    if (this.cached && !this.isExpired(this.cached.expiresAt)) return this.cached;
    return awaitUnlessAborted(this.singleFlight(() => this.loadOrRefresh(undefined, logger)), signal);
  }

  /**
   * §3: the upstream answered 401 to `rejected`. Drop it; use the file's token when it differs
   * (the CLI logged in again), otherwise force a refresh even though it did not look expired.
   */
  async recover(rejected: string, signal: AbortSignal, logger: EventLogger): Promise<ProviderBCredential> {
    if (this.cached?.accessToken === rejected) this.cached = undefined;
    if (this.inFlight) {
      const settled = await awaitUnlessAborted(this.inFlight, signal).catch((error: unknown) => {
        if (signal.aborted) throw error;
        return undefined;
      });
      if (settled && settled.accessToken !== rejected) return settled;
    }
    if (this.cached && this.cached.accessToken !== rejected && !this.isExpired(this.cached.expiresAt)) return this.cached;
    return awaitUnlessAborted(this.singleFlight(() => this.loadOrRefresh(rejected, logger)), signal);
  }

  private singleFlight(task: () => Promise<ProviderBCredential>): Promise<ProviderBCredential> {
    if (!this.inFlight) {
      this.inFlight = task().finally(() => {
        this.inFlight = undefined;
      });
    }
    return this.inFlight;
  }

  private async loadOrRefresh(rejected: string | undefined, logger: EventLogger): Promise<ProviderBCredential> {
    const file = await this.readFile(logger);
    if (file.accessToken && file.accessToken !== rejected && !this.isExpired(file.expiresAt)) {
      return this.remember({ accessToken: file.accessToken, expiresAt: file.expiresAt, loginKey: loginKey(file) });
    }
    if (!file.refreshToken) {
      logger.warn({ event: 'provider_b_auth_unavailable', reason: 'no_refresh_token', path: this.authFile }, 'provider_b_auth_unavailable');
      throw new GatewayError('auth', { detail: 'provider_b login expired and has no refresh token; run the Gemini CLI login' });
    }
    return this.refresh(file, logger);
  }

  private async readFile(logger: EventLogger): Promise<CredentialFile> {
    let raw: Record<string, unknown>;
    try {
      raw = await readJsonObject(this.authFile);
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : 'unreadable';
      logger.warn({ event: 'provider_b_auth_unavailable', reason, path: this.authFile }, 'provider_b_auth_unavailable');
      throw new GatewayError('auth', { detail: `provider_b login file ${reason}` });
    }
    const file: CredentialFile = {
      raw,
      accessToken: nonEmpty(raw.access_token),
      refreshToken: nonEmpty(raw.refresh_token),
      expiresAt: typeof raw.expiry_date === 'number' && Number.isFinite(raw.expiry_date) ? raw.expiry_date : undefined,
    };
    if (!file.accessToken && !file.refreshToken) {
      logger.warn({ event: 'provider_b_auth_unavailable', reason: 'no_tokens', path: this.authFile }, 'provider_b_auth_unavailable');
      throw new GatewayError('auth', { detail: 'provider_b login file holds no token' });
    }
    return file;
  }

  /** §2.2 refresh, then §2.4 write-back (a write failure is logged and does not fail the request). */
  private async refresh(file: CredentialFile, logger: EventLogger): Promise<ProviderBCredential> {
    const form = new URLSearchParams({
      client_id: GEMINI_CLI_CLIENT_ID,
      client_secret: GEMINI_CLI_CLIENT_SECRET,
      refresh_token: file.refreshToken!,
      grant_type: 'refresh_token',
    });
    let response: Response;
    try {
      response = await fetch(this.tokenUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
        body: form.toString(),
        signal: AbortSignal.timeout(TOKEN_REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      // Not an auth problem: the token endpoint was unreachable, so a retry may succeed.
      logger.warn({ event: 'provider_b_auth_refresh_failed', reason: 'unreachable' }, 'provider_b_auth_refresh_failed');
      throw new GatewayError('upstream', { detail: 'provider_b token endpoint unreachable', retryable: true, cause: error });
    }
    const body = await readJsonBody(response);
    const accessToken = nonEmpty(body?.access_token);
    if (response.status !== 200 || !accessToken) {
      const code = typeof body?.error === 'string' ? sanitizeIdentifier(body.error) : undefined;
      logger.warn({ event: 'provider_b_auth_refresh_failed', status: response.status, error: code }, 'provider_b_auth_refresh_failed');
      throw new GatewayError('auth', { detail: `provider_b token refresh failed (${response.status}${code ? ` ${code}` : ''})`, upstreamStatus: response.status });
    }
    const expiresIn = typeof body?.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : undefined;
    const expiresAt = expiresIn !== undefined ? this.now() + expiresIn * 1000 : undefined;
    const refreshToken = nonEmpty(body?.refresh_token) ?? file.refreshToken;
    await this.persist(file, body!, accessToken, expiresAt, logger);
    logger.info({ event: 'provider_b_auth_refreshed' }, 'provider_b_auth_refreshed');
    return this.remember({ accessToken, expiresAt, loginKey: loginKey({ refreshToken, accessToken }) });
  }

  private async persist(file: CredentialFile, body: Record<string, unknown>, accessToken: string, expiresAt: number | undefined, logger: EventLogger): Promise<void> {
    try {
      // Re-read: the CLI may have rewritten the file meanwhile; its unknown fields must survive.
      const current = await readJsonObject(this.authFile).catch(() => ({ ...file.raw }));
      current.access_token = accessToken;
      if (expiresAt !== undefined) current.expiry_date = expiresAt;
      for (const key of ['refresh_token', 'id_token', 'scope', 'token_type']) {
        const value = nonEmpty(body[key]);
        if (value) current[key] = value;
      }
      await writeJsonFileAtomic(this.authFile, current);
    } catch (error) {
      logger.warn({ event: 'provider_b_auth_persist_failed', code: (error as NodeJS.ErrnoException).code }, 'provider_b_auth_persist_failed');
    }
  }

  private remember(credential: ProviderBCredential): ProviderBCredential {
    this.cached = credential;
    return credential;
  }

  /** §1.2: expired at `expiry_date − 60 s`; no expiry means "use as is". */
  private isExpired(expiresAt: number | undefined): boolean {
    return expiresAt !== undefined && this.now() >= expiresAt - TOKEN_EXPIRY_MARGIN_MS;
  }
}

function loginKey(file: { refreshToken?: string; accessToken?: string }): string {
  return sha256Hex(`provider_b.login:${file.refreshToken ?? file.accessToken ?? ''}`).slice(0, 32);
}

async function readJsonBody(response: Response): Promise<Record<string, unknown> | undefined> {
  try {
    const text = await response.text();
    if (text.length > MAX_TOKEN_RESPONSE_BYTES) return undefined;
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
