import { GatewayError } from '../core/gateway.error';
import type { Admission, InFlightBinding } from './idempotency-store';
import { IdempotencyStore } from './idempotency-store';

class FakeClock {
  now = 1_000;
  readonly read = () => this.now;
  advance(ms: number) {
    this.now += ms;
  }
}

function setup(capacity = 4, ttlMs = 10_000) {
  const clock = new FakeClock();
  const store = new IdempotencyStore<string>({ capacity, ttlMs }, clock.read);
  return { clock, store };
}

function lead(admission: Admission<string>): InFlightBinding<string> {
  if (admission.kind !== 'lead') throw new Error(`expected lead, got ${admission.kind}`);
  return admission.binding;
}

describe(IdempotencyStore.name, () => {
  it('none → in-flight → stored: the leader calls once, a retry replays', async () => {
    const { store } = setup();
    const binding = lead(store.admit('k', 'f'));
    expect(store.size).toBe(1);
    store.succeed(binding, 'answer');
    await expect(binding.outcome).resolves.toBe('answer');
    expect(store.admit('k', 'f')).toEqual({ kind: 'replay', value: 'answer' });
    expect(store.admit('k', 'f')).toEqual({ kind: 'replay', value: 'answer' });
  });

  it('in-flight + same fingerprint: joiners share the one outcome', async () => {
    const { store } = setup();
    const binding = lead(store.admit('k', 'f'));
    const joins = [store.admit('k', 'f'), store.admit('k', 'f')];
    expect(joins.map((join) => join.kind)).toEqual(['join', 'join']);
    for (const join of joins) expect(join.kind === 'join' && join.binding).toBe(binding);
    store.succeed(binding, 'shared');
    await expect(
      Promise.all(
        joins.map((join) => (join.kind === 'join' ? join.binding.outcome : Promise.reject(new Error(join.kind)))),
      ),
    ).resolves.toEqual(['shared', 'shared']);
  });

  it('in-flight or stored + other fingerprint: conflict, binding unchanged', () => {
    const { store } = setup();
    const binding = lead(store.admit('k', 'f'));
    expect(store.admit('k', 'other')).toEqual({ kind: 'conflict' });
    store.succeed(binding, 'v');
    expect(store.admit('k', 'other')).toEqual({ kind: 'conflict' });
    expect(store.admit('k', 'f')).toEqual({ kind: 'replay', value: 'v' });
  });

  it('in-flight → none on failure: everyone gets the error, nothing is stored, a retry leads again', async () => {
    const { store } = setup();
    const binding = lead(store.admit('k', 'f'));
    const join = store.admit('k', 'f');
    const error = new GatewayError('upstream');
    store.fail(binding, error);
    await expect(binding.outcome).rejects.toBe(error);
    await expect(join.kind === 'join' ? join.binding.outcome : undefined).rejects.toBe(error);
    expect(store.size).toBe(0);
    expect(store.admit('k', 'f').kind).toBe('lead');
  });

  it('stores nothing with a TTL of 0: joiners share the outcome, a later retry runs again', async () => {
    // The clock does not move, so only the setting can keep the answer from being replayed.
    const { store } = setup(4, 0);
    const binding = lead(store.admit('k', 'f'));
    const join = store.admit('k', 'f');
    store.succeed(binding, 'v');
    await expect(join.kind === 'join' ? join.binding.outcome : undefined).resolves.toBe('v');
    expect(store.size).toBe(0);
    expect(store.admit('k', 'f').kind).toBe('lead');
  });

  it('stored → expired after the TTL counted from storing, then re-runs', () => {
    const { store, clock } = setup(4, 1_000);
    const binding = lead(store.admit('k', 'f'));
    clock.advance(3_000); // a slow upstream call: in-flight bindings never expire
    expect(store.admit('k', 'f').kind).toBe('join');
    store.succeed(binding, 'v');
    clock.advance(999);
    expect(store.admit('k', 'f')).toEqual({ kind: 'replay', value: 'v' });
    clock.advance(1);
    expect(store.size).toBe(0);
    expect(store.admit('k', 'f').kind).toBe('lead');
  });

  it('an expired binding with another fingerprint is not a conflict', () => {
    const { store, clock } = setup(4, 1_000);
    store.succeed(lead(store.admit('k', 'f')), 'v');
    clock.advance(1_000);
    expect(store.admit('k', 'other').kind).toBe('lead');
  });

  it('capacity: a new key gets retry-after until the earliest stored binding expires; nothing is evicted', () => {
    const { store, clock } = setup(2, 10_000);
    store.succeed(lead(store.admit('a', 'f')), 'A');
    clock.advance(2_500);
    store.succeed(lead(store.admit('b', 'f')), 'B');
    expect(store.admit('c', 'f')).toEqual({ kind: 'capacity', retryAfterSeconds: 8 });
    expect(store.admit('a', 'f')).toEqual({ kind: 'replay', value: 'A' });
    expect(store.admit('b', 'f')).toEqual({ kind: 'replay', value: 'B' });
    clock.advance(7_499);
    expect(store.admit('c', 'f')).toEqual({ kind: 'capacity', retryAfterSeconds: 1 });
    clock.advance(1);
    expect(store.admit('c', 'f').kind).toBe('lead');
    expect(store.admit('a', 'f').kind).toBe('capacity');
    expect(store.admit('b', 'f')).toEqual({ kind: 'replay', value: 'B' });
  });

  it('capacity: retry-after is 5 when every live binding is in flight', () => {
    const { store } = setup(1);
    lead(store.admit('a', 'f'));
    expect(store.admit('b', 'f')).toEqual({ kind: 'capacity', retryAfterSeconds: 5 });
    expect(store.admit('a', 'f').kind).toBe('join');
  });

  it('aborts the call and removes the binding when every participant left', async () => {
    const { store } = setup();
    const binding = lead(store.admit('k', 'f'));
    const join = store.admit('k', 'f');
    store.leave(binding);
    expect(binding.signal.aborted).toBe(false);
    expect(store.size).toBe(1);
    if (join.kind === 'join') store.leave(join.binding);
    expect(binding.signal.aborted).toBe(true);
    expect(store.size).toBe(0);
    await expect(binding.outcome).rejects.toThrow('client disconnected');
    // The leader's call then fails with the abort; that must not touch a newer binding.
    const next = lead(store.admit('k', 'f'));
    store.fail(binding, new Error('aborted'));
    store.succeed(binding, 'late');
    expect(store.admit('k', 'f')).toEqual({ kind: 'join', binding: next });
  });

  it('leaving after the outcome changes nothing', () => {
    const { store } = setup();
    const binding = lead(store.admit('k', 'f'));
    store.succeed(binding, 'v');
    store.leave(binding);
    expect(binding.signal.aborted).toBe(false);
    expect(store.admit('k', 'f')).toEqual({ kind: 'replay', value: 'v' });
  });

  it('with a TTL of 0 nothing replays', () => {
    const { store } = setup(4, 0);
    const binding = lead(store.admit('k', 'f'));
    store.succeed(binding, 'v');
    expect(store.size).toBe(0);
    expect(store.admit('k', 'f').kind).toBe('lead');
  });
});
