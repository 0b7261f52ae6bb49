import { loadConfig } from '../config/app-config';
import { GatewayError } from '../core/gateway.error';
import { familyIds } from '../core/family-registry';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import type { EventLogger } from '../core/event-logger';
import type { AdmitParams } from './agent-queue.service';
import { AgentQueueService } from './agent-queue.service';
import { conversationIdOf } from './chat-identity';
import type { QueueKey } from './chat-identity';
import { queueKey } from './chat-identity';

function fakeMetrics() {
  const waited: Array<[string, string, number]> = [];
  const depth: Array<[string, number]> = [];
  const metrics = {
    queueWaited: (provider: string, result: string, seconds: number) => waited.push([provider, result, seconds]),
    queueDepthChanged: (provider: string, value: number) => depth.push([provider, value]),
  } as unknown as GatewayMetrics;
  return { metrics, waited, depth };
}

function fakeLogger() {
  const records: Record<string, unknown>[] = [];
  const push = (fields: Record<string, unknown>) => records.push(fields);
  const logger: EventLogger = { info: push, warn: push, debug: push, error: push };
  return { logger, records };
}

function setup(env: Record<string, string> = {}) {
  const config = loadConfig({ HOME: '/nonexistent', PRIMARY_AGENT_MAX_ACTIVE: '1', ...env });
  const metrics = fakeMetrics();
  const log = fakeLogger();
  const service = new AgentQueueService(config, metrics.metrics);
  const keyOf = (id: string): QueueKey => {
    const request = { body: {}, headers: { 'x-session-id': id }, scope: undefined };
    return queueKey('chat', { ...request, caller: 'anonymous', conversation: conversationIdOf(request) });
  };
  const params = (overrides: Partial<AdmitParams> = {}): AdmitParams => ({
    provider: 'provider_a',
    toolTurn: true,
    key: keyOf('s1'),
    signal: new AbortController().signal,
    logger: log.logger,
    requestId: 'req-1',
    ...overrides,
  });
  return { service, params, keyOf, ...metrics, records: log.records };
}

describe(AgentQueueService.name, () => {
  it('lets a plain chat bypass at once while the only slot is held', async () => {
    const { service, params, waited } = setup();
    const held = await service.admit(params());
    const plain = await service.admit(params({ toolTurn: false }));
    expect(waited).toEqual([
      ['provider_a', 'acquired', expect.any(Number)],
      ['provider_a', 'bypassed', 0],
    ]);
    plain.release();
    held.release();
  });

  it('bypasses every request when the queue is disabled', async () => {
    const { service, params, waited, records } = setup({ PRIMARY_AGENT_QUEUE_ENABLED: 'false' });
    const first = await service.admit(params());
    const second = await service.admit(params());
    expect(waited.map(([, result]) => result)).toEqual(['bypassed', 'bypassed']);
    expect(records).toEqual([]);
    first.release();
    second.release();
  });

  it('keeps one queue per family: a saturated provider_a does not delay provider_b', async () => {
    const { service, params, keyOf } = setup({ PRIMARY_AGENT_QUEUE_LIMIT: '0' });
    const heldA = await service.admit(params({ key: keyOf('x') }));
    await expect(service.admit(params())).rejects.toMatchObject({ code: 'queue_full' });
    const b = await service.admit(params({ provider: 'provider_b' }));
    const c = await service.admit(params({ provider: 'provider_c' }));
    heldA.release();
    b.release();
    c.release();
  });

  it('logs queue_wait, queue_acquire and queue_release with ids and counts only', async () => {
    const { service, params, keyOf, records, depth } = setup();
    const key = keyOf('secret-session-id');
    const held = await service.admit(params({ key, requestId: 'req\nforged' }));
    const waiting = service.admit(params({ key, requestId: 'req-2' }));
    held.release();
    const slot = await waiting;
    slot.release();
    expect(records.map((record) => record.event)).toEqual([
      'queue_acquire',
      'queue_wait',
      'queue_release',
      'queue_acquire',
      'queue_release',
    ]);
    const ids = { provider: 'provider_a', key_mode: 'chat:header:x-session-id', key_hash: key.hash };
    expect(records[0]).toEqual({
      event: 'queue_acquire',
      ...ids,
      request_id: 'req forged',
      wait_ms: expect.any(Number),
      active: 1,
      active_key: 1,
    });
    expect(records[1]).toEqual({ event: 'queue_wait', ...ids, request_id: 'req-2', position: 1 });
    expect(records[2]).toEqual({
      event: 'queue_release',
      ...ids,
      request_id: 'req forged',
      run_ms: expect.any(Number),
    });
    expect(JSON.stringify(records)).not.toContain('secret-session-id');
    expect(depth).toContainEqual(['provider_a', 1]);
    expect(depth[depth.length - 1]).toEqual(['provider_a', 0]);
  });

  it('answers queue_full at once and logs it', async () => {
    const { service, params, waited, records } = setup({ PRIMARY_AGENT_QUEUE_LIMIT: '0' });
    const held = await service.admit(params());
    await expect(service.admit(params({ requestId: 'r2' }))).rejects.toMatchObject({
      code: 'queue_full',
      retryAfterHeader: 5,
    });
    expect(waited[waited.length - 1]).toEqual(['provider_a', 'full', 0]);
    expect(records[records.length - 1]).toMatchObject({
      event: 'queue_full',
      request_id: 'r2',
      blocked_by: 'queue_limit',
      setting: 'PRIMARY_AGENT_QUEUE_LIMIT',
    });
    held.release();
  });

  it('names the PRIMARY_AGENT_* setting behind each bound and what the same key means in its mode', async () => {
    const { service, params, keyOf } = setup({ PRIMARY_AGENT_MAX_ACTIVE: '2', PRIMARY_AGENT_QUEUE_LIMIT: '0' });
    const held = await service.admit(params());
    const messageOf = async (overrides: Partial<AdmitParams>) =>
      ((await Promise.resolve(service.admit(params(overrides))).catch((error: unknown) => error)) as GatewayError)
        .publicMessage;
    expect(await messageOf({})).toBe(
      'the waiting list is full (PRIMARY_AGENT_QUEUE_LIMIT=0): another turn of the same chat is still running ' +
        '(PRIMARY_AGENT_MAX_ACTIVE_PER_KEY=1); retry once it has ended, or raise PRIMARY_AGENT_QUEUE_LIMIT to wait ' +
        'for it, or PRIMARY_AGENT_MAX_ACTIVE_PER_KEY to run them side by side',
    );
    const other = await service.admit(params({ key: keyOf('s2') }));
    expect(await messageOf({ key: keyOf('s3') })).toBe(
      'the waiting list is full (PRIMARY_AGENT_QUEUE_LIMIT=0): all provider_a slots are busy ' +
        '(PRIMARY_AGENT_MAX_ACTIVE=2); retry in 5 s, or raise PRIMARY_AGENT_MAX_ACTIVE or PRIMARY_AGENT_QUEUE_LIMIT',
    );
    other.release();
    const global: QueueKey = { mode: 'global', value: 'global', hash: 'h' };
    const globalHeld = await service.admit(params({ key: global }));
    expect(await messageOf({ key: global })).toContain(
      'another turn with the same queue key (global) is still running',
    );
    globalHeld.release();
    const caller: QueueKey = { mode: 'caller', value: 'caller:anonymous', hash: 'h' };
    const callerHeld = await service.admit(params({ key: caller }));
    expect(await messageOf({ key: caller })).toContain('another turn of the same caller is still running');
    callerHeld.release();
    held.release();
  });

  it('answers queue_timeout after the configured wait and logs wait_ms', async () => {
    const { service, params, waited, records } = setup({ PRIMARY_AGENT_QUEUE_TIMEOUT: '50ms' });
    const held = await service.admit(params());
    await expect(service.admit(params())).rejects.toMatchObject({ code: 'queue_timeout', retryAfterHeader: 5 });
    const [, result, seconds] = waited[waited.length - 1];
    expect(result).toBe('timeout');
    expect(seconds).toBeGreaterThanOrEqual(0.045);
    expect(records[records.length - 1]).toMatchObject({
      event: 'queue_timeout',
      wait_ms: expect.any(Number),
      blocked_by: 'key',
      setting: 'PRIMARY_AGENT_MAX_ACTIVE_PER_KEY',
    });
    held.release();
  });

  it('rejects with the signal reason when the client leaves and counts canceled', async () => {
    const { service, params, waited, records } = setup();
    const held = await service.admit(params());
    const controller = new AbortController();
    const reason = new Error('client disconnected');
    const waiting = service.admit(params({ signal: controller.signal }));
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    expect(waited[waited.length - 1][1]).toBe('canceled');
    expect(records[records.length - 1]).toMatchObject({ event: 'queue_canceled' });
    const aborted = new AbortController();
    aborted.abort(reason);
    const counted = waited.length;
    await expect(service.admit(params({ signal: aborted.signal }))).rejects.toBe(reason);
    // A client gone before admission is counted too, once.
    expect(waited.slice(counted)).toEqual([['provider_a', 'canceled', 0]]);
    held.release();
  });

  it('counts a tool turn the drain deadline ended as draining, not canceled, whether it waited or not', async () => {
    const { service, params, waited, records } = setup();
    const held = await service.admit(params());
    const draining = new GatewayError('draining');
    const controller = new AbortController();
    const waiting = service.admit(params({ signal: controller.signal }));
    controller.abort(draining);
    await expect(waiting).rejects.toBe(draining);
    expect(waited[waited.length - 1][1]).toBe('draining');
    expect(records[records.length - 1]).toMatchObject({ event: 'queue_draining' });
    const before = new AbortController();
    before.abort(draining);
    const counted = waited.length;
    await expect(service.admit(params({ signal: before.signal }))).rejects.toBe(draining);
    expect(waited.slice(counted)).toEqual([['provider_a', 'draining', 0]]);
    held.release();
  });

  it("shows every family's queue depth as 0 from startup, before any tool turn", () => {
    const { depth } = setup();
    expect(depth).toEqual(familyIds().map((family) => [family, 0]));
  });

  it("logs a waiter that leaves from its client's close event under its own request's logger", async () => {
    // The abort fires from the socket's 'close' handler, outside the request's own code path;
    // the line must still go to the logger the waiter was admitted with.
    const { service, params, records } = setup();
    const loggerOf = (request: string): EventLogger => ({
      info: (fields) => records.push({ ...fields, logged_by: request }),
      warn: () => undefined,
      debug: () => undefined,
      error: () => undefined,
    });
    const held = await service.admit(params({ logger: loggerOf('request-1') }));
    const controller = new AbortController();
    const waiting = service.admit(params({ signal: controller.signal, logger: loggerOf('request-2') }));
    controller.abort(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
    expect(records.filter((record) => record.event === 'queue_canceled')).toEqual([
      expect.objectContaining({ logged_by: 'request-2' }),
    ]);
    held.release();
  });
});
