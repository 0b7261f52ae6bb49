import type { AccountClock } from '../../src/accounts/account-pool';
import { ACCOUNT_CLOCK } from '../../src/accounts/account-pools';
import type { TestGateway } from './create-test-app';
import { sampleValue, scrapeMetrics } from './prometheus-text';

/** Helpers for the account pool e2e specs (test/accounts-*.e2e-spec.ts). */

/** Moves the pools' clock of a running gateway forward (cooldowns, pins). */
export function advanceAccountClock(gateway: TestGateway, ms: number): void {
  const clock = gateway.app.get<AccountClock>(ACCOUNT_CLOCK, { strict: false });
  const previous = clock.now.bind(clock);
  clock.now = () => previous() + ms;
}

/** Stops the pools' clock of a running gateway where it is (a wait the pool computes is then exact); returns its time. */
export function freezeAccountClock(gateway: TestGateway): number {
  const clock = gateway.app.get<AccountClock>(ACCOUNT_CLOCK, { strict: false });
  const now = clock.now();
  clock.now = () => now;
  return now;
}

/** The state gauge that is 1 for one account of a family. */
export async function accountState(
  gateway: TestGateway,
  provider: string,
  account: string,
): Promise<string | undefined> {
  const text = await scrapeMetrics(gateway);
  return ['ready', 'cooling', 'login_dead', 'plan_spent', 'usage_paused'].find(
    (state) => sampleValue(text, 'gateway_chat_api_account_state', { provider, account, state }) === 1,
  );
}

type Json = Record<string, any>;

/** The body of turn `turns` of the chat `name` (its first user message names it, so its turns share a chat key). */
export function chatTurn(model: string, name: string, turns = 1): Json {
  const messages: Json[] = [{ role: 'user', content: `${name}: hello` }];
  for (let turn = 1; turn < turns; turn++)
    messages.push({ role: 'assistant', content: 'ok' }, { role: 'user', content: `${name}: turn ${turn}` });
  return { model, messages };
}
