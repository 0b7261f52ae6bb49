import * as http from 'node:http';
import * as net from 'node:net';
import type { ChildGateway } from './support/child-gateway';
import { spawnGateway } from './support/child-gateway';
import { completed, created, providerASettings, textDelta } from './support/provider-a-fixtures';
import { useFakeProviderA } from './support/provider-a-harness';
import { postChatBody } from './support/chat-sse';
import { eventually } from './support/poll';

/**
 * Draining (docs/design/decisions.md §6) with a REAL child process and a REAL signal: readiness turns 503 at
 * once, in-flight chat streams finish, and the process exits when idle or at
 * GATEWAY_DRAIN_TIMEOUT. The slow in-flight request is a streamed chat against the provider_a fake.
 */
describe('draining on SIGTERM / SIGINT (child process)', () => {
  const { fake, home } = useFakeProviderA({ homePrefix: 'gateway-drain-login-' });
  const children: ChildGateway[] = [];

  afterEach(async () => {
    await Promise.all(children.splice(0).map((child) => child.close()));
  });

  async function start(settings: Record<string, string> = {}): Promise<ChildGateway> {
    const child = await spawnGateway({
      ...providerASettings(fake(), home()),
      GATEWAY_PROVIDERS: 'provider_a',
      ...settings,
    });
    children.push(child);
    return child;
  }

  /** Starts a streamed chat; resolves once the first SSE bytes arrived, with a reader for the rest. */
  async function openStream(gateway: ChildGateway) {
    const response = await postChatBody(gateway, {
      model: 'gpt-5.6-sol',
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const first = await reader.read();
    text += decoder.decode(first.value);
    let ended = false;
    const rest = (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          text += decoder.decode(value, { stream: true });
        }
      } catch {
        // The gateway cut the connection (drain timeout): `text` keeps what arrived.
      }
      ended = true;
      return text;
    })();
    return { rest, isEnded: () => ended, textSoFar: () => text };
  }

  async function readiness(gateway: ChildGateway): Promise<{ status: number; body: unknown }> {
    const response = await fetch(`${gateway.url}/health/ready`);
    return { status: response.status, body: await response.json() };
  }

  /**
   * Polls readiness until it answers 503 (the signal is delivered asynchronously). No time limit of
   * its own: on a busy machine delivery can take a while, and Jest's timeout catches a hang.
   */
  async function waitForDraining(gateway: ChildGateway): Promise<void> {
    for (;;) {
      const ready = await readiness(gateway);
      if (ready.status === 503) {
        expect(ready.body).toEqual({ status: 'draining' });
        return;
      }
    }
  }

  // The drain timeouts below are a minute: "exited when idle" then means "long before the drain
  // timeout", a difference no busy machine blurs (the bounds are half of it).
  const LONG_DRAIN = '60s';
  const WELL_BEFORE_LONG_DRAIN_MS = 30_000;

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'exits at once with status 0 on %s when nothing is in flight',
    async (signal) => {
      const gateway = await start({ GATEWAY_DRAIN_TIMEOUT: LONG_DRAIN });
      expect((await readiness(gateway)).body).toEqual({ status: 'ready' });
      const sentAt = Date.now();
      gateway.process.kill(signal);
      const status = await gateway.exited;
      expect(status).toEqual({ code: 0, signal: null });
      expect(Date.now() - sentAt).toBeLessThan(WELL_BEFORE_LONG_DRAIN_MS);
      expect(gateway.records.find((record) => record.event === 'drain_start')).toMatchObject({ signal, in_flight: 0 });
      expect(gateway.records.find((record) => record.event === 'drain_end')).toMatchObject({ idle: true });
    },
  );

  it('turns readiness 503 at once, finishes the in-flight stream, then exits when idle', async () => {
    // The second delta comes 8 s later: readiness turns 503 long before the stream ends.
    fake().enqueue({ frames: [created(), textDelta('first '), textDelta('second', 'msg_1', 8000), completed()] });
    const gateway = await start({ GATEWAY_DRAIN_TIMEOUT: LONG_DRAIN });
    const stream = await openStream(gateway);

    gateway.process.kill('SIGTERM');
    const signalledAt = Date.now();
    await waitForDraining(gateway);
    // Still draining, not gone: the stream is open, liveness and chat-side routes still answer.
    expect(stream.isEnded()).toBe(false);
    expect((await fetch(`${gateway.url}/health/live`)).status).toBe(200);
    expect((await fetch(`${gateway.url}/v1/models`)).status).toBe(200);
    expect(gateway.process.exitCode).toBeNull();

    const text = await stream.rest;
    expect(text).toContain('"content":"second"');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const status = await gateway.exited;
    expect(status).toEqual({ code: 0, signal: null });
    // It waited for the stream (about 8 s), not for the minute of the drain timeout.
    expect(Date.now() - signalledAt).toBeLessThan(WELL_BEFORE_LONG_DRAIN_MS);
    expect(gateway.records.find((record) => record.event === 'drain_start')).toMatchObject({ in_flight: 1 });
    expect(gateway.records.find((record) => record.event === 'drain_end')).toMatchObject({ idle: true, in_flight: 0 });
  });

  it("answers a keep-alive client's next request sent the moment its stream ended, with Connection: close", async () => {
    fake().enqueue(
      { frames: [created(), textDelta('first '), textDelta('turn', 'msg_1', 1500), completed()] },
      { frames: [created(), textDelta('next turn'), completed()] },
    );
    const gateway = await start({ GATEWAY_DRAIN_TIMEOUT: LONG_DRAIN });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const turn = (name: string) =>
      new Promise<{ status: number; connection?: string; reused: boolean; text: string }>((resolve, reject) => {
        const body = JSON.stringify({
          model: 'gpt-5.6-sol',
          stream: true,
          messages: [{ role: 'user', content: name }],
        });
        const request = http.request(
          `${gateway.url}/v1/chat/completions`,
          { method: 'POST', agent, headers: { 'content-type': 'application/json' } },
          (response) => {
            let text = '';
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => (text += chunk));
            response.on('end', () =>
              resolve({
                status: response.statusCode!,
                connection: response.headers.connection,
                reused: request.reusedSocket,
                text,
              }),
            );
          },
        );
        request.on('error', reject);
        request.end(body);
      });
    try {
      const first = turn('first');
      await eventually(() => fake().requests().length === 1);
      gateway.process.kill('SIGTERM');
      await waitForDraining(gateway);
      // The next turn goes out on the same connection as soon as the first one's answer ended.
      const [firstAnswer, nextAnswer] = await first.then(async (answer) => [answer, await turn('second')] as const);
      expect(firstAnswer).toMatchObject({ status: 200, connection: 'keep-alive' });
      expect(nextAnswer).toMatchObject({ status: 200, connection: 'close', reused: true });
      expect(nextAnswer.text).toContain('"content":"next turn"');
      expect(await gateway.exited).toEqual({ code: 0, signal: null });
      expect(gateway.records.find((record) => record.event === 'drain_end')).toMatchObject({ idle: true });
    } finally {
      agent.destroy();
    }
  });

  it('exits within the grace after the drain ends, whatever connection arrived or still sends its headers', async () => {
    fake().enqueue({ frames: [created(), textDelta('late')], holdOpen: true });
    const gateway = await start({ GATEWAY_DRAIN_TIMEOUT: '1s' });
    // A client that has sent half its headers is no request in flight yet.
    const late = net.connect(Number(new URL(gateway.url).port), '127.0.0.1');
    late.on('error', () => undefined);
    late.write('POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\n');
    await new Promise((resolve) => late.once('ready', resolve));
    const signalledAt = Date.now();
    gateway.process.kill('SIGTERM');
    await eventually(() => gateway.records.some((record) => record.event === 'drain_end'));
    const body = JSON.stringify({ model: 'gpt-5.6-sol', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    late.write(`Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    const status = await gateway.exited;
    late.destroy();
    expect(status).toEqual({ code: 0, signal: null });
    expect(gateway.records.find((record) => record.event === 'drain_end')).toMatchObject({ idle: true });
    // The drain ended at once (nothing in flight); the held stream did not keep the process up.
    expect(Date.now() - signalledAt).toBeLessThan(WELL_BEFORE_LONG_DRAIN_MS);
  });

  it('exits at GATEWAY_DRAIN_TIMEOUT when a request hangs, closing the upstream turn', async () => {
    fake().enqueue({ frames: [created(), textDelta('partial')], holdOpen: true });
    const gateway = await start({ GATEWAY_DRAIN_TIMEOUT: '1s' });
    const stream = await openStream(gateway);
    const [upstream] = await fake().waitForRequests(1);

    const signalledAt = Date.now();
    gateway.process.kill('SIGTERM');
    const status = await gateway.exited;
    const elapsed = Date.now() - signalledAt;
    expect(status).toEqual({ code: 0, signal: null });
    // Not before the drain timeout; that it ends at all is what Jest's timeout guards.
    expect(elapsed).toBeGreaterThanOrEqual(900);
    expect(gateway.records.find((record) => record.event === 'drain_end')).toMatchObject({ idle: false });
    // The hanging client was cut off without [DONE], and the upstream connection was closed by the gateway.
    const text = await stream.rest;
    expect(text).not.toContain('[DONE]');
    // The gateway has exited, so the upstream connection is closed; the fake only has to notice.
    await upstream.closedByClient;
  });

  it.each([
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const)('exits at once on a second %s, with status 128 + its number (%i)', async (signal, code) => {
    fake().enqueue({ frames: [created(), textDelta('partial')], holdOpen: true });
    const gateway = await start({ GATEWAY_DRAIN_TIMEOUT: LONG_DRAIN });
    await openStream(gateway);
    gateway.process.kill(signal);
    await eventually(() => gateway.records.some((record) => record.event === 'drain_start'));
    gateway.process.kill(signal);
    expect(await gateway.exited).toEqual({ code, signal: null });
    expect(gateway.records.some((record) => record.event === 'drain_end')).toBe(false);
  });
});
