import { registerFamily } from '../src/core/family-registry';
import { postChatBody, sseChunks } from './support/chat-sse';
import type { TestGateway } from './support/create-test-app';
import { startGateway } from './support/create-test-app';
import { renderHelp } from '../src/config/app-config';
import { ECHO_ID, echoFamily } from './support/echo-family/echo.family';
import { echoAnswer, FakeEchoUpstream } from './support/echo-family/fake-echo-upstream';
import { sampleValue, scrapeMetrics } from './support/prometheus-text';

type Json = Record<string, any>;

/**
 * A fourth family that only this spec knows (test/support/echo-family/): registered with
 * `registerFamily` before the gateway is built, enabled by GATEWAY_PROVIDERS like a built-in one,
 * and served over real HTTP by the same shared machinery (catalog passthrough ids, the chat layer,
 * the turn runner, the account pool, the error table, /v1/accounts and the metrics).
 */
const FAMILY = ECHO_ID;
/** The family's two pooled logins, in pool order, and the bearer its fake upstream knows each by. */
const LOGINS = { first: 'echo-token-first', second: 'echo-token-second' } as const;
/** A passthrough id (`<family>/<model>`), beside the catalog row its rows file declares. */
const MODEL = `${FAMILY}/echo-1`;
const CATALOG_MODEL = 'echo-small';
const PROMPT = 'hello there';

describe('a family registered by a test runs end to end on the shared machinery', () => {
  let fake: FakeEchoUpstream | undefined;
  let gateway: TestGateway | undefined;

  beforeAll(async () => {
    fake = await FakeEchoUpstream.start(LOGINS);
    registerFamily(
      echoFamily({
        logins: Object.entries(LOGINS).map(([alias, token]) => ({ alias, token })),
      }),
    );
  });
  afterAll(() => fake?.close());
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
    fake?.reset();
  });

  /** A fresh gateway per test, so every login starts ready. */
  async function start(settings: Record<string, string> = {}): Promise<TestGateway> {
    gateway = await startGateway({ GATEWAY_PROVIDERS: FAMILY, ECHO_URL: upstream().url, ...settings });
    return gateway;
  }
  const upstream = () => fake!;
  /** The login of every request the upstream received, in order. */
  const askedLogins = () =>
    upstream()
      .requests()
      .map((request) => request.login);
  const chat = (body: Json = {}) =>
    postChatBody(gateway!, { model: MODEL, messages: [{ role: 'user', content: PROMPT }], ...body });
  const accounts = async (): Promise<Json[]> => {
    const response = await fetch(`${gateway!.url}/v1/accounts`);
    expect(response.status).toBe(200);
    return ((await response.json()) as Json).data as Json[];
  };
  const stateOf = async (alias: string) => (await accounts()).find((entry) => entry.account === alias)?.state;

  it('streams a turn: SSE chunks of the upstream text, the usage chunk and [DONE]', async () => {
    await start();
    const response = await chat({ stream: true, stream_options: { include_usage: true } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const { chunks, done } = sseChunks(await response.text());
    expect(done).toBe(true);
    const text = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('');
    expect(text).toBe(echoAnswer('first', PROMPT));
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.model === MODEL)).toBe(true);
    expect(chunks.map((chunk) => chunk.choices[0]?.finish_reason).filter(Boolean)).toEqual(['stop']);
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 2, completion_tokens: 4, total_tokens: 6 },
    });
    expect(upstream().requests()).toEqual([{ login: 'first', model: 'echo-1', prompt: PROMPT, stream: true }]);
    // Neither the prompt nor a login's bearer reaches the log.
    expect(gateway!.logs.text).not.toContain(PROMPT);
    for (const token of Object.values(LOGINS)) expect(gateway!.logs.text).not.toContain(token);
  });

  it('answers a non-streamed turn with one chat.completion', async () => {
    await start();
    // The startup login report reads the declaration's logins like a built-in family's.
    expect(
      gateway!.logs.records('login_state').map(({ provider, account, state }) => ({ provider, account, state })),
    ).toEqual([
      { provider: FAMILY, account: 'first', state: 'usable' },
      { provider: FAMILY, account: 'second', state: 'usable' },
    ]);
    const response = await chat();
    expect(response.status).toBe(200);
    const body = (await response.json()) as Json;
    expect(body).toMatchObject({
      object: 'chat.completion',
      model: MODEL,
      choices: [
        { index: 0, message: { role: 'assistant', content: echoAnswer('first', PROMPT) }, finish_reason: 'stop' },
      ],
      usage: { prompt_tokens: 2, completion_tokens: 4, total_tokens: 6 },
    });
    expect(upstream().requests()).toEqual([{ login: 'first', model: 'echo-1', prompt: PROMPT, stream: false }]);
  });

  it('answers an upstream 401 on every login with the auth error naming the family fix', async () => {
    // Its CLI name enables the family as well as its id does.
    await start({ GATEWAY_PROVIDERS: 'echo-cli' });
    upstream().refuse('first', { status: 401, code: 'login_revoked' });
    upstream().refuse('second', { status: 401, code: 'login_revoked' });
    const response = await chat();
    expect(response.status).toBe(403);
    expect(((await response.json()) as Json).error).toEqual({
      type: 'permission_error',
      code: 'upstream_login_required',
      param: null,
      message:
        "echo has no usable Echo CLI login on the gateway (this is not about your API key): run `echo-cli login` on the gateway's machine; the gateway picks the new login up without a restart",
    });
    // A refused login is dead: the turn moved once, to the other login, which was refused too.
    expect(askedLogins()).toEqual(['first', 'second']);
    expect(await stateOf('first')).toBe('login_dead');
    expect(await stateOf('second')).toBe('login_dead');
  });

  it('retries an upstream 500 before output on the same login, then answers 502 upstream_error', async () => {
    await start();
    upstream().refuse(
      'first',
      { status: 500, code: 'overloaded' },
      { status: 500, code: 'overloaded' },
      { status: 500, code: 'overloaded' },
    );
    const response = await chat({ stream: true });
    expect(response.status).toBe(502);
    expect(((await response.json()) as Json).error).toEqual({
      type: 'upstream_error',
      code: 'upstream_error',
      param: null,
      message:
        "the upstream failed to answer; retry in a few seconds. If it keeps failing, the gateway's operator finds the cause in the gateway log under this response's x-request-id",
    });
    // The shared retry rule: two more attempts before output; a 500 is not the login's fault.
    expect(askedLogins()).toEqual(['first', 'first', 'first']);
    expect(await stateOf('first')).toBe('ready');
  });

  it('moves a turn whose first login reached its usage limit to the second login', async () => {
    await start();
    // Counters are process-wide (earlier tests' gateways counted too): this test reads its own increase.
    const labels = (account: string) => ({ provider: FAMILY, account });
    const counted = (metrics: string) => ({
      movedAway: sampleValue(metrics, 'gateway_chat_api_account_turns_moved_away_total', labels('first')) ?? 0,
      cooldowns:
        sampleValue(metrics, 'gateway_chat_api_account_cooldowns_total', {
          ...labels('first'),
          reason: 'usage_limit',
        }) ?? 0,
      movedTo:
        sampleValue(metrics, 'gateway_chat_api_account_selections_total', { ...labels('second'), kind: 'moved' }) ?? 0,
    });
    const before = counted(await scrapeMetrics(gateway!));
    upstream().refuse('first', { status: 429, code: 'usage_limit', resetsInSeconds: 600 });
    const sentAt = Date.now();
    const response = await chat({ stream: true });
    expect(response.status).toBe(200);
    const { chunks, done } = sseChunks(await response.text());
    expect(done).toBe(true);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')).toBe(echoAnswer('second', PROMPT));
    expect(askedLogins()).toEqual(['first', 'second']);

    const listed = await accounts();
    expect(listed.map(({ provider, account, state }) => ({ provider, account, state }))).toEqual([
      { provider: FAMILY, account: 'first', state: 'cooling' },
      { provider: FAMILY, account: 'second', state: 'ready' },
    ]);
    const metrics = await scrapeMetrics(gateway!);
    const after = counted(metrics);
    expect({
      movedAway: after.movedAway - before.movedAway,
      cooldowns: after.cooldowns - before.cooldowns,
      movedTo: after.movedTo - before.movedTo,
    }).toEqual({ movedAway: 1, cooldowns: 1, movedTo: 1 });
    // It rests until the reset the upstream reported, counted from no earlier than the request.
    expect(
      sampleValue(metrics, 'gateway_chat_api_account_cooling_until_seconds', labels('first')),
    ).toBeGreaterThanOrEqual(Math.floor(sentAt / 1000) + 600);
    expect(gateway!.logs.records('upstream_account_moved')).toEqual([
      expect.objectContaining({ provider: FAMILY, from_account: 'first', to_account: 'second' }),
    ]);

    // A new chat now starts on the second login: the first one rests until its reset.
    const next = await chat({ messages: [{ role: 'user', content: 'another chat' }] });
    expect(((await next.json()) as Json).choices[0].message.content).toBe(echoAnswer('second', 'another chat'));
  });

  it('answers 429 with the earliest reset, in the family words, once both logins reached their usage limit', async () => {
    await start();
    upstream().refuse('first', { status: 429, code: 'usage_limit', resetsInSeconds: 900 });
    upstream().refuse('second', { status: 429, code: 'usage_limit', resetsInSeconds: 300 });
    const response = await chat();
    expect(response.status).toBe(429);
    expect(askedLogins()).toEqual(['first', 'second']);
    // The wait is the pool's: the second login's reset comes first.
    expect(response.headers.get('retry-after')).toBe('300');
    expect(((await response.json()) as Json).error).toEqual({
      type: 'rate_limit_error',
      code: 'usage_limit_reached',
      param: null,
      message: 'echo: this Echo CLI login reached its usage limit; retry in 5 min, or add another login',
    });
    expect((await accounts()).map((entry) => entry.state)).toEqual(['cooling', 'cooling']);
  });

  it('serves its catalog rows, reads its settings rows and answers its own error code', async () => {
    // Its rows are settings like any other: in --help, and given here by environment.
    expect(renderHelp()).toContain('ECHO_TIMEOUT / --echo-timeout');
    await start();
    const models = (await (await fetch(`${gateway!.url}/v1/models`)).json()) as Json;
    expect(models.data.map((entry: Json) => entry.id)).toContain(CATALOG_MODEL);

    const response = await chat({ model: CATALOG_MODEL });
    expect(response.status).toBe(200);
    expect(((await response.json()) as Json).model).toBe(CATALOG_MODEL);
    expect(upstream().requests()).toEqual([{ login: 'first', model: 'echo-1', prompt: PROMPT, stream: false }]);

    upstream().refuse('first', { status: 410, code: 'model_retired' });
    const retired = await chat({ model: CATALOG_MODEL });
    expect(retired.status).toBe(404);
    expect(((await retired.json()) as Json).error).toEqual({
      type: 'invalid_request_error',
      code: 'model_retired',
      param: null,
      message: 'the echo upstream retired this model; pick another echo model',
    });
  });
});
