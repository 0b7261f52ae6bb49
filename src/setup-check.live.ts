import { AccountPools } from './accounts/account-pools';
import { createGatewayApp } from './app.factory';
import { MAX_TIMER_MS } from './common/async/timer-range';
import type { AppConfig } from './config/app-config';

/** The outcome of one live chat. */
export interface LiveAnswer {
  readonly ok: boolean;
  /** What the setup check prints after `live chat (<model>): `. */
  readonly summary: string;
}

/** A chat that cannot take longer is stuck: the check reports it instead of waiting for the provider timeout. */
const LIVE_CHAT_TIMEOUT_MS = 180_000;
const PROMPT = 'Reply with the single word OK.';
/** A usage-read interval longer than a timer holds: the startup round only (timer-range.ts). */
const STARTUP_READ_ONLY_MS = MAX_TIMER_MS + 1;
/** How much of the answer the check prints. */
const SHOWN_ANSWER_LENGTH = 60;

/**
 * `--check --live` (docs/troubleshooting.md): one tiny chat per model, sent over HTTP to the
 * gateway itself, booted from the same settings on a free loopback port, so it takes the path a
 * client's chat takes (bearer, queue, account pool, adapter, upstream). Its log is off: the check
 * prints the outcome, and an error answer carries the code and the fix. The chats wait for the
 * first round of usage reads (under ACCOUNT_PAID_USAGE=plan_only a spent plan is refused unsent).
 */
export async function liveChats(config: AppConfig, models: readonly string[]): Promise<LiveAnswer[]> {
  if (models.length === 0) return [];
  const app = await createGatewayApp({
    ...config,
    // The check read every login's usage endpoint already; the gateway it boots reads it once too,
    // whatever ACCOUNT_USAGE_REFRESH_INTERVAL says (the check sends no more than one chat per family).
    accounts: { ...config.accounts, usageRefreshIntervalMs: STARTUP_READ_ONLY_MS },
    server: { ...config.server, host: '127.0.0.1', port: 0 },
    logLevel: 'silent',
    logFormat: 'json',
  });
  try {
    await app.listen(0, '127.0.0.1');
    // The chats go out once every login's first usage read is over: a plan the endpoint says is
    // spent is refused (ACCOUNT_PAID_USAGE=plan_only), never paid.
    await app.get(AccountPools, { strict: false }).usageSettled();
    const { port } = app.getHttpServer().address() as { port: number };
    const answers: LiveAnswer[] = [];
    for (const model of models) answers.push(await liveChat(`http://127.0.0.1:${port}`, config, model));
    return answers;
  } finally {
    app.getHttpServer().closeAllConnections();
    await app.close();
  }
}

async function liveChat(url: string, config: AppConfig, model: string): Promise<LiveAnswer> {
  const started = Date.now();
  try {
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(config.server.bearerSecret ? { authorization: `Bearer ${config.server.bearerSecret}` } : {}),
      },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: PROMPT }] }),
      signal: AbortSignal.timeout(LIVE_CHAT_TIMEOUT_MS),
    });
    const body = (await response.json()) as {
      choices?: Array<{ message?: { content?: unknown } }>;
      error?: { code?: unknown; message?: unknown };
    };
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    if (response.ok) {
      const content = body.choices?.[0]?.message?.content;
      const text = typeof content === 'string' ? oneLine(content) : '';
      return { ok: true, summary: `answered in ${seconds} s: "${text}"` };
    }
    return {
      ok: false,
      summary: `failed with HTTP ${response.status} ${String(body.error?.code ?? '')}: ${String(body.error?.message ?? '')}`,
    };
  } catch (error) {
    const reason =
      (error as Error).name === 'TimeoutError'
        ? `no answer within ${LIVE_CHAT_TIMEOUT_MS / 1000} s`
        : (error as Error).message;
    return { ok: false, summary: `failed: ${reason}` };
  }
}

/** The answer on one line, cut short: enough to see the family answered. */
function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= SHOWN_ANSWER_LENGTH ? flat : `${flat.slice(0, SHOWN_ANSWER_LENGTH)}…`;
}
