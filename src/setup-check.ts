import { configuredLogins } from './accounts/configured-logins';
import type { AppConfig } from './config/app-config';
import { familyOf } from './core/family-registry';
import type { LoginCheck } from './core/login-state';
import { isUsable, loginStateMessage, noUsableLogin } from './core/login-state';
import type { ProviderId } from './core/provider-id';
import type { CatalogEntry } from './models/model-catalog';
import { ModelCatalog } from './models/model-catalog';
import { planLineForCheck } from './providers/plan-usage-check';

export interface SetupCheckOptions {
  /** Also send one real chat per family with a usable login. */
  readonly live: boolean;
  readonly write: (text: string) => void;
  readonly now?: number;
}

/**
 * The setup check (`npm run check`, `node dist/main.js --check`; docs/troubleshooting.md): what
 * `npm start` with the same settings would find, printed for a person and then exit. Per enabled
 * family: each login in the startup login report's own words (state, reason, the fix, and the
 * CLI's version where the family's check learns it), its token's expiry where its file has one,
 * what each usable login's plan has left and its paid usage (read from the vendor's usage
 * endpoint, where the family has one), and the models the catalog would serve. With `--live`, one tiny chat per family through the gateway's own HTTP chat route.
 * Exit code 0 only when every enabled family has a usable login (and, with `--live`, answered).
 */
export async function runSetupCheck(config: AppConfig, options: SetupCheckOptions): Promise<number> {
  const now = options.now ?? Date.now();
  const write = options.write;
  const catalog = ModelCatalog.load(config.modelCatalogPath, config.enabledProviders);
  const logins = configuredLogins(config);
  const checks = await Promise.all(
    logins.map((login) => login.check(now).catch((): LoginCheck => ({ state: 'unusable', reason: 'check failed' }))),
  );

  const usableFamilies: ProviderId[] = [];
  const sections = new Map<ProviderId, string[]>();
  for (const provider of config.enabledProviders) {
    const lines: string[] = [];
    const mine = logins.flatMap((login, index) =>
      login.provider === provider ? [{ login, check: checks[index] }] : [],
    );
    // What each usable login has left, from its vendor's usage endpoint (one read per login, in turn).
    const planLines = await Promise.all(
      mine.map(({ login, check }) =>
        isUsable(check.state) ? planLineForCheck(config, provider, login.account, now) : Promise.resolve(undefined),
      ),
    );
    mine.forEach(({ login, check }, index) => {
      lines.push(`  ${loginStateMessage(provider, login.account, check, login.loginCommand, login.loginFile)}`);
      if (check.expiresAt !== undefined) lines.push(`    token expires: ${expiryText(check.expiresAt, now)}`);
      if (planLines[index] !== undefined) lines.push(`    ${planLines[index]}`);
    });
    lines.push(`  ${modelsText(catalog.listed.filter((entry) => entry.provider === provider))}`);
    if (mine.some(({ check }) => isUsable(check.state))) usableFamilies.push(provider);
    else
      lines.push(
        `  ${
          noUsableLogin(
            provider,
            mine.map(({ login, check }) => ({ alias: login.account, check, loginCommand: login.loginCommand })),
          ).message
        }`,
      );
    sections.set(provider, lines);
  }

  let liveFailures = 0;
  if (options.live) {
    const targets = usableFamilies.map((provider) => ({ provider, model: liveModel(catalog, provider) }));
    const liveTargets = targets.filter((target): target is { provider: ProviderId; model: string } => !!target.model);
    // Loaded only for --live: it boots the whole gateway.
    const { liveChats } = await import('./setup-check.live');
    const answers = await liveChats(
      config,
      liveTargets.map((target) => target.model),
    );
    liveTargets.forEach(({ provider, model }, index) => {
      sections.get(provider)!.push(`  live chat (${model}): ${answers[index].summary}`);
      if (!answers[index].ok) liveFailures++;
    });
    for (const provider of config.enabledProviders) {
      if (!liveTargets.some((target) => target.provider === provider))
        sections.get(provider)!.push('  live chat: not sent (no usable login, or no model in the catalog)');
    }
  }

  for (const provider of config.enabledProviders) {
    write(`${provider} (${familyOf(provider).fix.cli})\n${sections.get(provider)!.join('\n')}\n\n`);
  }
  const unusable = config.enabledProviders.filter((provider) => !usableFamilies.includes(provider));
  if (unusable.length > 0) {
    write(
      `setup check failed: ${unusable.length} of ${config.enabledProviders.length} enabled families have no usable login (${unusable.join(', ')}); run the fix above, or leave the family out of GATEWAY_PROVIDERS\n`,
    );
    return 1;
  }
  if (liveFailures > 0) {
    write(`setup check failed: the live chat of ${liveFailures} families failed (see above)\n`);
    return 1;
  }
  write(
    `setup check passed: every enabled family has a usable login${options.live ? ' and answered a live chat' : ''}\n`,
  );
  return 0;
}

/**
 * The family's models as `GET /v1/models` lists them, one entry per upstream model: its first id,
 * and how many more ids reach it (reasoning-effort and speed variants, aliases).
 */
function modelsText(listed: readonly CatalogEntry[]): string {
  if (listed.length === 0) return 'models: none (the catalog lists none of this family)';
  const byUpstream = new Map<string, string[]>();
  for (const entry of listed)
    byUpstream.set(entry.upstream_model, [...(byUpstream.get(entry.upstream_model) ?? []), entry.id]);
  const groups = [...byUpstream.values()].map(([first, ...more]) =>
    more.length > 0 ? `${first} (+${more.length})` : first,
  );
  return `models: ${listed.length} ids for ${byUpstream.size} upstream models: ${groups.join(', ')}`;
}

/** The catalog's default model when the family serves it, else the family's first listed model. */
function liveModel(catalog: ModelCatalog, provider: ProviderId): string | undefined {
  const listed = catalog.listed.filter((entry) => entry.provider === provider);
  return (listed.find((entry) => entry.id === catalog.defaultModel) ?? listed[0])?.id;
}

/** `2026-11-28T06:12:00Z (in 1 h 12 min)`, or `… (2 min ago)`. */
function expiryText(expiresAt: number, now: number): string {
  const when = new Date(expiresAt).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const minutes = Math.round(Math.abs(expiresAt - now) / 60_000);
  const span = minutes >= 60 ? `${Math.floor(minutes / 60)} h ${minutes % 60} min` : `${minutes} min`;
  return `${when} (${expiresAt >= now ? `in ${span}` : `${span} ago`})`;
}
