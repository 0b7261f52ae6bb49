import type { FakeScript } from './support/fake-provider-a';
import { FAKE_RESPONSES_PATH } from './support/fake-provider-a';
import {
  callContext,
  collectEvents,
  completed,
  created,
  errorEvent,
  failed,
  functionCallItem,
  incomplete,
  providerAChatRequest,
  providerAModel,
  reasoningDelta,
  rejectionOf,
  textDelta,
  textReply,
  usageLimitEvent,
} from './support/provider-a-fixtures';
import { recordingLogger } from './support/recorders';
import { useFakeProviderA } from './support/provider-a-harness';
import { closeAdapterModules } from './support/adapter-module';
import { makeProviderAAdapter } from './support/provider-a-adapter';
import { FIRING_BOUND } from './support/timer-bounds';

/** provider_a adapter against the loopback fake: stream translation, errors, retries, timers, abort. */
describe('ProviderAAdapter (stream, errors, retries)', () => {
  afterEach(closeAdapterModules);
  const { fake, home } = useFakeProviderA({ homePrefix: 'pa-stream-', homeScope: 'test' });

  describe.each(['ws', 'sse'] as const)('over %s', (transport) => {
    const adapterFor = async (settings: Record<string, string> = {}) =>
      (await makeProviderAAdapter(fake(), home(), { transport, settings })).adapter;

    it('joins 2 000 argument fragments into one complete tool call (docs/upstream/provider-a.md §12.26)', async () => {
      const args = JSON.stringify({ text: 'ab'.repeat(1994) + 'c' });
      fake().enqueue({
        frames: [created(), ...functionCallItem('call_1', 'write', args, { fragments: 2000 }), completed()],
      });
      const events = await collectEvents(await (await adapterFor()).stream(providerAChatRequest(), callContext()));
      expect(events.filter((event) => event.type === 'tool-call')).toEqual([
        { type: 'tool-call', call: { id: 'call_1', name: 'write', kind: 'function', arguments: args } },
      ]);
    });

    it('emits a call seen as deltas and again in output_item.done once, in stream and complete (docs/upstream/provider-a.md §12.27)', async () => {
      const frames = [
        created(),
        textDelta('Reading.'),
        ...functionCallItem('call_1', 'read_file', '{"path":"a.ts"}'),
        ...functionCallItem('call_1', 'read_file', '{"path":"a.ts"}', { fragments: 0 }),
        completed(),
      ];
      fake().enqueue({ frames }, { frames });
      const adapter = await adapterFor();
      for (const events of [
        await collectEvents(await adapter.stream(providerAChatRequest(), callContext())),
        await collectEvents(await adapter.complete(providerAChatRequest(), callContext())),
      ]) {
        expect(events.filter((event) => event.type === 'tool-call')).toHaveLength(1);
        expect(events[0]).toEqual({ type: 'text-delta', text: 'Reading.' });
      }
    });

    it('orders calls by first appearance even when output indices go 2 then 1 (docs/upstream/provider-a.md §12.28)', async () => {
      const second = functionCallItem('call_b', 'b', '{}', { outputIndex: 2 });
      const first = functionCallItem('call_a', 'a', '{}', { outputIndex: 1 });
      fake().enqueue({ frames: [created(), second[0], first[0], ...first.slice(1), ...second.slice(1), completed()] });
      const events = await collectEvents(await (await adapterFor()).stream(providerAChatRequest(), callContext()));
      expect(
        events
          .filter((event) => event.type === 'tool-call')
          .map((event) => (event.type === 'tool-call' ? event.call.id : '')),
      ).toEqual(['call_b', 'call_a']);
    });

    it('ends response.incomplete with finish length instead of hanging (docs/upstream/provider-a.md §12.31)', async () => {
      fake().enqueue({ frames: [created(), textDelta('cut'), incomplete('max_output_tokens')], holdOpen: true });
      const events = await collectEvents(await (await adapterFor()).stream(providerAChatRequest(), callContext()));
      expect(events).toEqual([
        { type: 'text-delta', text: 'cut' },
        { type: 'finish', reason: 'length' },
      ]);
    });

    it('streams reasoning summaries with a blank line between parts', async () => {
      fake().enqueue({
        frames: [
          created(),
          reasoningDelta('First.', 0),
          reasoningDelta('Second.', 1),
          textDelta('Answer'),
          completed(),
        ],
      });
      const events = await collectEvents(await (await adapterFor()).stream(providerAChatRequest(), callContext()));
      expect(events.slice(0, 3)).toEqual([
        { type: 'reasoning-delta', text: 'First.' },
        { type: 'reasoning-delta', text: '\n\nSecond.' },
        { type: 'text-delta', text: 'Answer' },
      ]);
    });

    it('rejects a usage limit with Retry-After 30 and does not retry (docs/upstream/provider-a.md §12.34)', async () => {
      fake().enqueue({ frames: [usageLimitEvent(30)] }, textReply('never'));
      const failure = await rejectionOf((await adapterFor()).stream(providerAChatRequest(), callContext()));
      expect(failure.code).toBe('usage_limit');
      expect(failure.retryAfterHeader).toBe(30);
      expect(fake().requests()).toHaveLength(1);
    });

    it('takes a usage limit reset from rate-limit headers when the error has none', async () => {
      const resetAt = Math.floor(Date.now() / 1000) + 120;
      fake().enqueue({
        reject: {
          status: 429,
          headers: { 'x-codex-primary-used-percent': '100', 'x-codex-primary-reset-at': String(resetAt) },
          body: { error: { type: 'usage_limit_reached' } },
        },
        frames: [],
      });
      const failure = await rejectionOf((await adapterFor()).stream(providerAChatRequest(), callContext()));
      expect(failure.code).toBe('usage_limit');
      expect(failure.retryAfterHeader).toBeGreaterThanOrEqual(118);
      expect(failure.retryAfterHeader).toBeLessThanOrEqual(120);
    });

    it('classifies context_length_exceeded as context_window without retry (docs/upstream/provider-a.md §12.35)', async () => {
      fake().enqueue({ frames: [created(), failed('context_length_exceeded', 'too long')] }, textReply('never'));
      const adapter = await adapterFor();
      const events = await collectEvents(await adapter.stream(providerAChatRequest(), callContext()));
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ type: 'error', error: { code: 'context_window' } });
      expect(fake().requests()).toHaveLength(1);
    });

    it('retries a 503 once and succeeds; three 503s fail upstream after exactly three connections (docs/upstream/provider-a.md §12.36)', async () => {
      const adapter = await adapterFor();
      fake().enqueue({ reject: { status: 503 }, frames: [] }, textReply('recovered'));
      const events = await collectEvents(await adapter.stream(providerAChatRequest(), callContext()));
      expect(events[0]).toEqual({ type: 'text-delta', text: 'recovered' });
      expect(fake().requests()).toHaveLength(2);

      fake().reset();
      fake().enqueue(
        ...Array.from({ length: 3 }, (): FakeScript => ({ reject: { status: 503 }, frames: [] })),
        textReply('never'),
      );
      const failure = await rejectionOf(adapter.stream(providerAChatRequest(), callContext()));
      expect(failure.code).toBe('upstream');
      expect(fake().requests()).toHaveLength(3);
    });

    it('retries a rate limit (not a usage limit) honouring a larger Retry-After hint', async () => {
      fake().enqueue(
        {
          reject: { status: 429, headers: { 'retry-after': '1' }, body: { error: { code: 'rate_limit_exceeded' } } },
          frames: [],
        },
        textReply('later'),
      );
      const started = Date.now();
      const events = await collectEvents(await (await adapterFor()).stream(providerAChatRequest(), callContext()));
      expect(events[0]).toEqual({ type: 'text-delta', text: 'later' });
      expect(Date.now() - started).toBeGreaterThanOrEqual(950);
      expect(fake().requests()).toHaveLength(2);
    });

    it('does not retry when a hint is beyond the retry cap: one connection, 429 with that Retry-After', async () => {
      fake().enqueue(
        {
          reject: { status: 429, headers: { 'retry-after': '60' }, body: { error: { code: 'rate_limit_exceeded' } } },
          frames: [],
        },
        textReply('never'),
      );
      const started = Date.now();
      const failure = await rejectionOf((await adapterFor()).stream(providerAChatRequest(), callContext()));
      expect(failure).toMatchObject({ code: 'rate_limited', retryAfterSeconds: 60 });
      expect(fake().requests()).toHaveLength(1);
      // Not after sleeping for the 60 s hint (the bound is half of it).
      expect(Date.now() - started).toBeLessThan(30_000);
    });

    it('retries an accepted turn that closed before any output, on a new connection', async () => {
      fake().enqueue({ frames: [created(), { disconnect: true }] }, textReply('second try'));
      const events = await collectEvents(await (await adapterFor()).stream(providerAChatRequest(), callContext()));
      expect(events[0]).toEqual({ type: 'text-delta', text: 'second try' });
      expect(fake().requests()).toHaveLength(2);
    });

    it('does not retry a socket dropped after a text delta: one connection, terminal error (docs/upstream/provider-a.md §12.37)', async () => {
      fake().enqueue({ frames: [created(), textDelta('partial'), { disconnect: true }] }, textReply('never'));
      const events = await collectEvents(await (await adapterFor()).stream(providerAChatRequest(), callContext()));
      expect(events).toEqual([
        { type: 'text-delta', text: 'partial' },
        { type: 'error', error: expect.objectContaining({ code: 'upstream' }) },
      ]);
      expect(fake().requests()).toHaveLength(1);
    });

    it('treats a non-JSON frame as an upstream protocol error, even when the turn then completes', async () => {
      const raw = transport === 'ws' ? 'not json' : 'data: not json\n\n';
      // The completion after the bad frame must not hide it: the turn ends with the error, not finished.
      fake().enqueue({ frames: [created(), textDelta('x'), { raw }, completed()] });
      const events = await collectEvents(await (await adapterFor()).stream(providerAChatRequest(), callContext()));
      expect(events.map((event) => event.type)).toEqual(['text-delta', 'error']);
      expect(events.at(-1)).toMatchObject({ type: 'error', error: { code: 'upstream' } });
    });

    it('rejects when the first event is response.failed on every attempt (no SSE header could be sent)', async () => {
      fake().enqueue(...Array.from({ length: 3 }, (): FakeScript => ({ frames: [failed('server_error')] })));
      const failure = await rejectionOf((await adapterFor()).stream(providerAChatRequest(), callContext()));
      expect(failure.code).toBe('upstream');
      expect(fake().requests()).toHaveLength(3);
    });

    it('closes the upstream connection within 1 s when the caller aborts mid-stream (docs/upstream/provider-a.md §12.38)', async () => {
      fake().enqueue({ frames: [created(), textDelta('first')], holdOpen: true });
      const controller = new AbortController();
      const events = await (await adapterFor()).stream(providerAChatRequest(), callContext(controller.signal));
      const iterator = events[Symbol.asyncIterator]();
      expect((await iterator.next()).value).toEqual({ type: 'text-delta', text: 'first' });
      const pending = iterator.next();
      controller.abort(new Error('client gone'));
      await expect(pending).rejects.toThrow('client gone');
      const [recorded] = fake().requests();
      await recorded.closedByClient;
    });

    it('aborts at once while waiting for the first event', async () => {
      fake().enqueue({ frames: [], holdOpen: true });
      const controller = new AbortController();
      const pending = (await adapterFor()).stream(providerAChatRequest(), callContext(controller.signal));
      const [recorded] = await fake().waitForRequests(1);
      // The upstream never answers (holdOpen): only the abort can end the wait.
      controller.abort(new Error('client gone'));
      await expect(pending).rejects.toThrow('client gone');
      await recorded.closedByClient;
    });

    it('aborts at once between retries', async () => {
      fake().enqueue({ reject: { status: 503, headers: { 'retry-after': '8' } }, frames: [] }, textReply('never'));
      const controller = new AbortController();
      const pending = (await adapterFor()).stream(providerAChatRequest(), callContext(controller.signal));
      await fake().waitForRequests(1);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const started = Date.now();
      controller.abort(new Error('client gone'));
      await expect(pending).rejects.toThrow('client gone');
      // Not after sleeping out the 8 s retry hint (the bound is half of it).
      expect(Date.now() - started).toBeLessThan(4000);
      expect(fake().requests()).toHaveLength(1);
    });

    it('ends a silent stream with a timeout error after the idle timeout (docs/upstream/provider-a.md §12.39)', async () => {
      fake().enqueue({ frames: [created(), textDelta('then silence')], holdOpen: true });
      const events = await collectEvents(
        await (
          await adapterFor({ GATEWAY_STREAM_IDLE_TIMEOUT: FIRING_BOUND })
        ).stream(providerAChatRequest(), callContext()),
      );
      expect(events).toEqual([
        { type: 'text-delta', text: 'then silence' },
        { type: 'error', error: expect.objectContaining({ code: 'timeout' }) },
      ]);
      await fake().requests()[0].closedByClient;
    });

    it('rejects with timeout when nothing arrives before the idle timeout', async () => {
      fake().enqueue({ frames: [], holdOpen: true });
      const failure = await rejectionOf(
        (await adapterFor({ GATEWAY_STREAM_IDLE_TIMEOUT: FIRING_BOUND })).stream(providerAChatRequest(), callContext()),
      );
      expect(failure.code).toBe('timeout');
      expect(fake().requests()).toHaveLength(1);
    });

    it('bounds the whole turn with PROVIDER_A_TIMEOUT', async () => {
      fake().enqueue({
        frames: [
          created(),
          textDelta('a'),
          // Each a second apart: the idle bound (5 s here) never fires, the turn's bound does.
          textDelta('b', 'msg_1', 1000),
          textDelta('c', 'msg_1', 1000),
          textDelta('d', 'msg_1', 1000),
        ],
        holdOpen: true,
      });
      const events = await collectEvents(
        await (await adapterFor({ PROVIDER_A_TIMEOUT: FIRING_BOUND })).stream(providerAChatRequest(), callContext()),
      );
      expect(events.at(-1)).toMatchObject({ type: 'error', error: { code: 'timeout' } });
      expect(events.filter((event) => event.type === 'text-delta').length).toBeLessThan(4);
    });

    it('keeps secrets from an upstream error message out of the error and the logs (docs/upstream/provider-a.md §12.40)', async () => {
      const secret = 'sk-LEAKED-0123456789 Bearer eyJsecret';
      fake().enqueue({
        reject: { status: 400, body: { error: { message: secret, code: 'invalid_value' } } },
        frames: [],
      });
      const logger = recordingLogger();
      const failure = await rejectionOf(
        (await adapterFor()).stream(providerAChatRequest(), callContext(undefined, logger)),
      );
      expect(failure.code).toBe('bad_request');
      const everything =
        logger.text() +
        JSON.stringify({
          message: failure.message,
          detail: failure.detail,
          public: failure.publicMessage,
          cause: String(failure.cause),
        });
      expect(everything).not.toContain('LEAKED');
      expect(everything).not.toContain('eyJsecret');

      fake().enqueue({ frames: [created(), textDelta('x'), errorEvent({ code: 'server_error', message: secret })] });
      const events = await collectEvents(
        await (await adapterFor()).stream(providerAChatRequest(), callContext(undefined, logger)),
      );
      expect(JSON.stringify(events) + logger.text()).not.toContain('LEAKED');
    });

    it('extract() retries like chat and honours the context deadline', async () => {
      const adapter = await adapterFor();
      const request = {
        model: providerAModel('gpt-5.6-sol'),
        input: 'x',
        schema: { type: 'object' },
        schemaName: 's',
        conversationId: 'k',
      };
      fake().enqueue({ reject: { status: 502 }, frames: [] }, textReply('{"a":1}'));
      expect((await adapter.extract(request, callContext())).text).toBe('{"a":1}');
      expect(fake().requests()).toHaveLength(2);

      fake().enqueue({ frames: [created()], holdOpen: true });
      const context = { ...callContext(), deadlineAt: Date.now() + 300 };
      const failure = await rejectionOf(adapter.extract(request, context));
      expect(failure.code).toBe('timeout');
    });
  });

  describe('over sse only', () => {
    const adapterFor = async () => (await makeProviderAAdapter(fake(), home(), { transport: 'sse' })).adapter;

    it.each([302, 307])(
      'does not follow a %i redirect: each one is a refusal with its status, retried, never re-POSTed',
      async (status) => {
        // A followed redirect would re-send the turn to the Location (here the same endpoint, which
        // would then answer the next script); a 3xx is not an SSE stream either.
        const redirect: FakeScript = { reject: { status, headers: { location: FAKE_RESPONSES_PATH } }, frames: [] };
        fake().enqueue(redirect, redirect, redirect, textReply('followed'));
        const failure = await rejectionOf((await adapterFor()).stream(providerAChatRequest(), callContext()));
        expect(failure).toMatchObject({ code: 'upstream', upstreamStatus: status });
        expect(fake().requests()).toHaveLength(3);
      },
    );
  });
});
