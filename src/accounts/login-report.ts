import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { AccountPools } from './account-pools';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.tokens';
import { isUsable, LoginCheck, loginFix, loginStateMessage, noUsableLogin } from '../core/login-state';
import type { ProviderId } from '../core/provider-id';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import type { ConfiguredLogin } from './configured-logins';
import { configuredLogins } from './configured-logins';
import { errnoOf } from '../common/errno';

/** File checks are a stat and a small read: cheap enough to follow a new login within seconds. */
const CHECK_INTERVAL_MS = 10_000;
/** `claude auth status` starts the whole CLI: asked again only this often, and only while not usable. */
const CLI_STATUS_INTERVAL_MS = 60_000;

interface LoginEntry extends ConfiguredLogin {
  /** What the offline check found last. */
  found?: LoginCheck;
  /** What the report told last: that finding, or what requests learned over it (`loginVerdict`). */
  last?: LoginCheck;
  checkedAt?: number;
}

/**
 * The login report (docs/accounts.md): what every configured login of every enabled family looks like,
 * told at startup without any network call — one readable line per login (family, alias, state and
 * the one command that fixes it; never a token, path content or e-mail), a warning per family left
 * without a usable login — and kept current afterwards: a login written later, or refused by a
 * request, changes the line and the `gateway_chat_api_login_state` gauge without a restart. Each
 * finding also goes to the family's account pool (`AccountPool.loginChecked`), so the pool's
 * state agrees with the report. It runs beside startup, never before readiness: nothing here is
 * awaited by the boot.
 */
@Injectable()
export class LoginReport implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly entries: LoginEntry[];
  private readonly familyUsable = new Map<ProviderId, boolean>();
  private timer?: NodeJS.Timeout;
  private round?: Promise<void>;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly logger: PinoLogger,
    private readonly metrics: GatewayMetrics,
    private readonly pools: AccountPools,
  ) {
    this.entries = configuredLogins(config);
  }

  onApplicationBootstrap(): void {
    this.round = this.checkAll(true);
    this.timer = setInterval(() => {
      this.round ??= this.checkAll(false).finally(() => (this.round = undefined));
    }, CHECK_INTERVAL_MS);
    this.timer.unref();
    void this.round.finally(() => (this.round = undefined));
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /** Resolves once the current round (the startup one at first) has told every login (specs wait on it). */
  async settled(): Promise<void> {
    await this.round;
  }

  private async checkAll(startup: boolean): Promise<void> {
    const now = Date.now();
    for (const provider of new Set(this.entries.map((entry) => entry.provider))) {
      const entries = this.entries.filter((entry) => entry.provider === provider);
      await Promise.all(entries.map((entry) => this.checkOne(entry, now, startup)));
      this.tellFamily(provider, entries, startup);
    }
  }

  private async checkOne(entry: LoginEntry, now: number, startup: boolean): Promise<void> {
    // A CLI is asked again by its own last finding, not by what requests learned over it (read
    // anew every round, below): a refused login's line comes back with the login, no CLI started.
    let check = entry.found;
    const due =
      entry.checkedAt === undefined ||
      !entry.spawnsCli ||
      (!isUsable(entry.found!.state) && now - entry.checkedAt >= CLI_STATUS_INTERVAL_MS);
    if (due) {
      try {
        check = await entry.check(now);
      } catch (error) {
        check = { state: 'unusable', reason: 'check failed' };
        this.logger.warn(
          {
            event: 'login_check_failed',
            provider: entry.provider,
            account: entry.account,
            errno: errnoOf(error),
          },
          'login_check_failed',
        );
      }
      entry.found = check;
      entry.checkedAt = now;
      // A fresh finding rules the login out of the pool or back in (one mechanism for every family).
      this.pools.poolOf(entry.provider)?.loginChecked(entry.account, check);
    }
    // What requests learned (a refused login, an ineligible account) outranks a file that looks fine.
    const verdict = this.pools.poolOf(entry.provider)?.loginVerdict(entry.account);
    // Only over a login that looks fine on disk: a missing or unusable file (or CLI) is the more
    // precise cause of the same refusal, and names the same fix.
    if (verdict && check && isUsable(check.state)) check = { state: verdict, cliVersion: check.cliVersion };
    if (!check) return;
    const changed = entry.last?.state !== check.state || entry.last?.reason !== check.reason;
    entry.last = check;
    if (!startup && !changed) return;
    this.metrics.loginState(entry.provider, entry.account, check.state);
    const fields = {
      event: 'login_state',
      provider: entry.provider,
      account: entry.account,
      state: check.state,
      reason: check.reason,
      cli_version: check.cliVersion,
      fix: check.fix ?? loginFix(entry.provider, check.state, entry.loginCommand),
      // Where a missing login was looked for: the operator's own setting, never what a file holds.
      path: check.state === 'missing' ? entry.loginFile : undefined,
    };
    const message = loginStateMessage(entry.provider, entry.account, check, entry.loginCommand, entry.loginFile);
    if (startup || isUsable(check.state)) this.logger.info(fields, message);
    else this.logger.warn(fields, message);
  }

  /** One warning when a family has no usable login (at startup, or when its last one went). */
  private tellFamily(provider: ProviderId, entries: readonly LoginEntry[], startup: boolean): void {
    const usable = entries.some((entry) => entry.last !== undefined && isUsable(entry.last.state));
    const before = this.familyUsable.get(provider);
    this.familyUsable.set(provider, usable);
    if (usable || (!startup && before === false)) return;
    const { fix, message } = noUsableLogin(
      provider,
      entries.map((entry) => ({ alias: entry.account, check: entry.last, loginCommand: entry.loginCommand })),
    );
    const fields = { event: 'login_none_usable', provider, accounts: entries.map((entry) => entry.account) };
    this.logger.warn({ ...fields, fix }, message);
  }
}
