import type { AccountMetrics } from '../../src/accounts/account-pool';
import type { EventLogger } from '../../src/core/event-logger';

/** A pino-shaped logger that keeps every record (for "no secrets in logs" assertions). */
export interface RecordingLogger extends EventLogger {
  /** Every line's fields, with its message as `msg`. */
  readonly records: Array<Record<string, unknown>>;
  /** All records as one JSON string. */
  text(): string;
}

export function recordingLogger(): RecordingLogger {
  const records: Array<Record<string, unknown>> = [];
  const push = (fields: Record<string, unknown>, message: string) => void records.push({ ...fields, msg: message });
  return { records, info: push, warn: push, debug: push, error: push, text: () => JSON.stringify(records) };
}

/** The account series a pool published, in order: `[series, family, alias, ...values]`. */
export interface RecordingAccountMetrics {
  readonly metrics: AccountMetrics;
  readonly calls: Array<[string, ...unknown[]]>;
  /** The last call of one series for one alias. */
  last(series: string, alias: string): [string, ...unknown[]] | undefined;
}

/** Account metrics that keep every call, named by series (`registered`, `state`, `inFlight`…). */
export function recordingAccountMetrics(): RecordingAccountMetrics {
  const calls: Array<[string, ...unknown[]]> = [];
  const record =
    (series: string) =>
    (...args: unknown[]) =>
      void calls.push([series, ...args]);
  const metrics: AccountMetrics = {
    accountRegistered: record('registered'),
    accountState: record('state'),
    accountInFlight: record('inFlight'),
    accountPinnedChats: record('pinned'),
    accountSelected: record('selected'),
    accountCooldown: record('cooldown'),
    accountMovedAway: record('moved'),
    accountPlan: record('plan'),
    accountPaidTurn: record('paidTurn'),
  };
  const last = (series: string, alias: string) =>
    calls.filter((call) => call[0] === series && call[2] === alias).at(-1);
  return { metrics, calls, last };
}
