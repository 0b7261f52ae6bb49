/** Why an account is cooling: the upstream's usage window is spent, or it answered 429. */
export type CooldownReason = 'usage_limit' | 'rate_limited';

/**
 * The state of one login. `cooling` ends by itself at `until`; `login_dead` ends when the login
 * file differs from `fingerprint` (the file as it was when the login failed).
 */
export type AccountState =
  | { readonly kind: 'ready' }
  | { readonly kind: 'cooling'; readonly until: number; readonly reason: CooldownReason }
  | { readonly kind: 'login_dead'; readonly fingerprint: string | undefined };

export type AccountStateKind = AccountState['kind'];

export const ACCOUNT_STATE_KINDS: readonly AccountStateKind[] = ['ready', 'cooling', 'login_dead'];

/** One usage window the upstream reported for an account (provider_a: primary, secondary). */
export interface QuotaWindow {
  readonly name: string;
  /** 0..1 (and above when the upstream overshoots). */
  readonly usedRatio: number;
  /** Epoch ms; undefined when not reported. */
  readonly resetAt?: number;
}

/** How an account was chosen for a turn (a metric label). */
export type SelectionKind = 'pinned' | 'new' | 'moved';

/** The clock every pool decision reads; tests inject a manual one. */
export interface AccountClock {
  now(): number;
}

export const SYSTEM_CLOCK: AccountClock = { now: () => Date.now() };
