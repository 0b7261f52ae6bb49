import type { UpstreamProxy } from '../../common/egress/upstream-proxy';
import type { AppConfig } from '../../config/app-config';
import type { EventLogger } from '../../core/event-logger';
import type { PlanReport } from '../../core/plan-usage';

/** One login's usage read for the setup check: the login, and the proxy and deadline it is read on. */
export interface PlanRead {
  readonly config: AppConfig;
  /** The login's alias among the family's configured logins. */
  readonly alias: string;
  readonly proxy: UpstreamProxy;
  readonly signal: AbortSignal;
  readonly logger: EventLogger;
}

// The part of a family's declaration the setup check reads (src/providers/plan-usage-check.ts).
declare module '../../core/family' {
  interface Family {
    /**
     * What one login's plan has left, read from the vendor's usage endpoint for the setup check
     * (`npm run check`); `undefined` when the answer carried no usage. The reader's code is loaded
     * on the first read. Absent: the family has no usage endpoint, and the check prints no plan line.
     */
    readonly readPlan?: (read: PlanRead) => Promise<PlanReport | undefined>;
  }
}
