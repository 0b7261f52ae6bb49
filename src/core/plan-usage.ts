/**
 * What one login's subscription plan has left, as its upstream reported it: the plan's usage
 * windows and the paid usage (Anthropic's extra usage, Codex credits) that the vendor draws once
 * the plan is spent. Every family turns what its upstream sends (response headers, stream events,
 * the CLI's `rate_limit_event`, the vendor's own usage endpoint) into this one shape, and the
 * account pool keeps the latest per login (docs/providers.md "What each vendor meters, and what
 * the gateway does about it").
 */

/** One usage window of a plan (Codex primary/secondary, Claude five_hour/seven_day, a Gemini quota bucket). */
export interface PlanWindow {
  /** The vendor's name for the window, e.g. `primary`, `five_hour`, or a Gemini model id. */
  readonly name: string;
  /** Share of the window used, 0..1 (above 1 when the upstream overshoots); undefined when not reported. */
  readonly usedRatio?: number;
  /** Length of the window in seconds, when reported. */
  readonly windowSeconds?: number;
  /** When the window resets, epoch ms, when reported. */
  readonly resetsAt?: number;
}

/** What the vendor calls the paid usage it draws after the plan: Claude's extra usage, Codex credits. */
export type PaidUsageKind = 'extra_usage' | 'credits';

/** The paid usage behind a plan, as far as the upstream said. Every field is optional: vendors say part of it. */
export interface PaidUsage {
  readonly kind: PaidUsageKind;
  /** The login may draw paid usage once the plan is spent (overage enabled, credits left or unlimited). */
  readonly available?: boolean;
  /** The turn that reported this drew, or is drawing, paid usage. */
  readonly inUse?: boolean;
  /** The vendor's balance as it wrote it (Codex credits); shown, never computed with. */
  readonly balance?: string;
  /** Why paid usage is unavailable, in the vendor's word (`out_of_credits`, `org_level_disabled`). */
  readonly disabledReason?: string;
}

/** One report of a login's plan, from one upstream answer or one read of the vendor's usage endpoint. */
export interface PlanReport {
  /** The windows this report carries; a window not named here keeps its last reported value. */
  readonly windows: readonly PlanWindow[];
  readonly paid?: PaidUsage;
  /**
   * The plan itself is spent (Claude's unified status `rejected`, a Codex window at 100 %, a
   * Gemini bucket at 0): what still gets served is paid usage, or nothing.
   */
  readonly planSpent?: boolean;
  /** The vendor's plan name when it says one (Codex `plan_type`). */
  readonly planType?: string;
  /** Where it came from: an answer to a turn, or the vendor's usage endpoint. */
  readonly source: 'turn' | 'usage_endpoint';
}

/** Where a family sends what it read of a login's plan: the login's account pool. */
export interface PlanReporter {
  reportPlan(alias: string, report: PlanReport): void;
}
