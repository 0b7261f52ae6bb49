import { untilAborted } from '../common/async/abortable';
import type { EventLogger } from '../core/event-logger';

/*
 * Each login's token, which every family's login handle keeps (docs/upstream/provider-a.md §1.4, docs/upstream/provider-b.md §2.3).
 */

/** A token counts as expired this long before its real expiry (docs/upstream/provider-a.md §1.3, docs/upstream/provider-b.md §1.2). */
export const LOGIN_EXPIRY_SKEW_MS = 60_000;

/** Expired means `now >= expiry − 60 s`; an unknown expiry is used as is (a 401 forces a refresh). */
export function isExpired(expiresAt: number | undefined, now: number): boolean {
  return expiresAt !== undefined && now >= expiresAt - LOGIN_EXPIRY_SKEW_MS;
}

/** What the cache needs to know about a login's token; providers add their own fields. */
export interface LoginToken {
  readonly accessToken: string;
  /** Epoch ms; undefined when unknown. */
  readonly expiresAt?: number;
}

/**
 * Re-reads the login file and returns its token unless that is `rejectedToken` or expired, else
 * refreshes and writes back (docs/upstream/provider-a.md §1.4 steps 2–4, docs/upstream/provider-b.md §2.3 steps 2–4).
 */
export type LoadLoginToken<T extends LoginToken> = (rejectedToken: string | undefined) => Promise<T>;

/**
 * The in-memory token of one CLI login file with one load in flight at a time: concurrent callers
 * await the same promise instead of refreshing again (docs/upstream/provider-a.md §1.4, docs/upstream/provider-b.md §2.3).
 * Only process-level state lives here; `load` is passed per call because it logs per request.
 */
export class LoginTokenCache<T extends LoginToken> {
  private cached?: T;
  private inFlight?: Promise<T>;
  /**
   * A load of the file as it was before `forget()`: the next load starts once it settled, so the
   * same refresh token is never spent twice at once (a file put back with an expired token).
   */
  private superseded?: Promise<T>;
  /** Counts `forget()` calls: a load started before one does not fill the cache it emptied. */
  private generation = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** Step 1: the cached token when not expired, else the (shared) load. */
  current(load: LoadLoginToken<T>, signal: AbortSignal): Promise<T> {
    const cached = this.usable();
    if (cached) return Promise.resolve(cached);
    return untilAborted(this.inFlight ?? this.start(load, undefined), signal);
  }

  /** The cached token when it is usable now, else `undefined`: step 1 without a wait. */
  usable(): T | undefined {
    const cached = this.cached;
    return cached && this.isUsable(cached, undefined) ? cached : undefined;
  }

  /**
   * The upstream refused `rejectedToken` (docs/upstream/provider-a.md §1.7, docs/upstream/provider-b.md §3): drop it; take the
   * result of a load already in flight when it brings another token, else load with the rejected
   * token excluded (the file's token if it changed meanwhile, otherwise a forced refresh).
   */
  async afterRejection(rejectedToken: string, load: LoadLoginToken<T>, signal: AbortSignal): Promise<T> {
    if (this.cached?.accessToken === rejectedToken) this.cached = undefined;
    // Loop, so that the decision below runs synchronously after the last in-flight load settled:
    // joining a load started meanwhile without the exclusion could hand back the rejected token.
    while (this.inFlight) {
      const settled = await untilAborted(this.inFlight, signal).catch((error: unknown) => {
        if (signal.aborted) throw error;
        return undefined;
      });
      if (settled && settled.accessToken !== rejectedToken) return settled;
    }
    const cached = this.cached;
    if (cached && this.isUsable(cached, rejectedToken)) return cached;
    return untilAborted(this.start(load, rejectedToken), signal);
  }

  /**
   * Background refresh (docs/accounts.md): when the current token expires within `aheadMs`,
   * renew it now through the same single flight as a request's refresh (a newer token the CLI
   * wrote to the file meanwhile is taken instead), so an idle login stays logged in. Resolves
   * with the expiry of the token it renewed to, undefined when none was due (RefreshLogin).
   */
  async refreshAhead(aheadMs: number, load: LoadLoginToken<T>): Promise<number | undefined> {
    const signal = new AbortController().signal;
    const token = await this.current(load, signal);
    if (token.expiresAt === undefined || token.expiresAt - this.now() > aheadMs) return undefined;
    return (await this.afterRejection(token.accessToken, load, signal)).expiresAt;
  }

  /**
   * The login file changed on disk (the pool's sweep saw it): the cached token, and a load already
   * running, may be the previous login's. The next caller reads the file again, once that load is
   * over: both may refresh with the same token, which a refresh spends.
   */
  forget(): void {
    this.cached = undefined;
    this.superseded = this.inFlight ?? this.superseded;
    this.inFlight = undefined;
    this.generation++;
  }

  /** Neither the rejected token nor expired (a file's token is checked with the same rule). */
  isUsable(
    token: { readonly accessToken?: string; readonly expiresAt?: number },
    rejectedToken: string | undefined,
  ): boolean {
    return (
      token.accessToken !== undefined && token.accessToken !== rejectedToken && !isExpired(token.expiresAt, this.now())
    );
  }

  private start(load: LoadLoginToken<T>, rejectedToken: string | undefined): Promise<T> {
    const generation = this.generation;
    const before = this.superseded;
    this.superseded = undefined;
    const loaded = before ? before.then(loadAfter, loadAfter).then(() => load(rejectedToken)) : load(rejectedToken);
    const pending = loaded
      .then((token) => {
        if (generation === this.generation) this.cached = token;
        return token;
      })
      .finally(() => {
        if (this.inFlight === pending) this.inFlight = undefined;
      });
    this.inFlight = pending;
    return pending;
  }
}

/**
 * A CLI login file as every family reads it, with the same verbs (docs/accounts.md): the token for
 * the next call, the one after the upstream refused a token, and the background renewal.
 */
export interface LoginTokenSource<C extends { readonly accessToken: string }> {
  /** A usable token: the cached one, else the file's, else a refresh. */
  current(signal: AbortSignal, logger: EventLogger): Promise<C>;
  /**
   * The cached token when it is usable now, without waiting: what `current` would resolve with at
   * once. A turn on a fresh token then takes it without a promise; `undefined` means ask `current`.
   */
  cached?(): C | undefined;
  /** The upstream refused `rejected` (401): the file's newer token, else a forced refresh. */
  afterRejection(rejected: C, signal: AbortSignal, logger: EventLogger): Promise<C>;
  /** Renews the token when it expires within `aheadMs`; resolves with the new token's expiry, if any. */
  refreshAhead(aheadMs: number, logger: EventLogger): Promise<number | undefined>;
}

/** Whatever the superseded load ended with, the next one starts. */
function loadAfter(): void {}
