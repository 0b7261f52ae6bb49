import { Controller, Get, Inject } from '@nestjs/common';
import { CompressJson } from '../common/http/compression.interceptor';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.tokens';
import type { LoginPlanView } from './account-pool';
import { AccountPools } from './account-pools';

const iso = (epochMs: number | undefined) => (epochMs === undefined ? null : new Date(epochMs).toISOString());

/** One login in `GET /v1/accounts`: the family, the operator's alias and what its plan has left. */
export function accountEntry(provider: string, account: string, view: LoginPlanView) {
  return {
    provider,
    account,
    state: view.state,
    rests_until: iso(view.restsUntil),
    plan_type: view.planType ?? null,
    windows: view.windows.map((window) => ({
      name: window.name,
      model: window.model ?? null,
      used_ratio: window.usedRatio ?? null,
      window_seconds: window.windowSeconds ?? null,
      resets_at: iso(window.resetsAt),
    })),
    paid_usage: view.paid
      ? {
          kind: view.paid.kind,
          available: view.paid.available ?? null,
          in_use: view.paid.inUse ?? false,
          balance: view.paid.balance ?? null,
          disabled_reason: view.paid.disabledReason ?? null,
        }
      : null,
    plan_spent: view.planSpent,
    needs_extra_usage: view.needsExtraUsageSince !== undefined,
    needs_extra_usage_since: iso(view.needsExtraUsageSince),
    source: view.source ?? null,
    updated_at: iso(view.updatedAt),
  };
}

/**
 * `GET /v1/accounts` (docs/endpoints.md): per enabled family and login alias, what the login's plan
 * has left, its paid usage and the guard's state, for a script or a dashboard. Behind the same
 * bearer as `/v1/*` (the global guard). Aliases only: never an e-mail, account id or token.
 */
@Controller('v1/accounts')
@CompressJson()
export class AccountsController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly pools: AccountPools,
  ) {}

  @Get()
  list() {
    const data = this.config.enabledProviders.flatMap((provider) => {
      const pool = this.pools.poolOf(provider);
      return pool ? pool.aliases.map((alias) => accountEntry(provider, alias, pool.planView(alias))) : [];
    });
    return { object: 'list', paid_usage_setting: this.config.accounts.paidUsage, data };
  }
}
