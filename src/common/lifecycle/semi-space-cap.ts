import { PerformanceObserver } from 'node:perf_hooks';
import * as v8 from 'node:v8';

const MIB = 1024 * 1024;

/** V8's default: each time the young generation grows, its semi-space doubles. */
const DOUBLING = 2;
/** A growth factor of one: V8 keeps the semi-space it has. */
const HOLD = 1;

/**
 * The growth factor V8 should use at its next young-generation growth: doubling while the doubled
 * semi-space stays within the cap, holding once it would not (docs/performance.md "Young generation").
 */
export function semiSpaceGrowthFactor(semiSpaceBytes: number, capBytes: number): number {
  return semiSpaceBytes * DOUBLING <= capBytes ? DOUBLING : HOLD;
}

/** The semi-space V8 uses now: the new space is its two semi-spaces. */
function currentSemiSpaceBytes(): number {
  const newSpace = v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
  return (newSpace?.space_size ?? 0) / 2;
}

function setGrowthFactor(factor: number): void {
  v8.setFlagsFromString(`--semi-space-growth-factor=${factor}`);
}

/**
 * Keeps V8's semi-space at or below `capMib` (GATEWAY_MAX_SEMI_SPACE_MIB; 0 leaves V8's own
 * growth) in a process started without `--max-semi-space-size`, which only works on node's command
 * line. V8 reads its growth factor each time it grows the young generation, so the gateway lets it
 * double while the result fits and holds it after that; a GC observer re-decides after every
 * collection, and V8's own shrinking when idle is untouched. It starts holding and is called
 * before the framework loads: the synchronous start-up, when no observer can run, grows nothing.
 * The cap is soft: one more doubling can happen between a collection and its observer's turn.
 * Hand-written because no library steers V8's young generation at run time.
 */
export function capSemiSpace(capMib: number): void {
  if (capMib <= 0) return;
  const capBytes = capMib * MIB;
  let factor = HOLD;
  setGrowthFactor(factor);
  const decide = () => {
    const next = semiSpaceGrowthFactor(currentSemiSpaceBytes(), capBytes);
    if (next === factor) return;
    factor = next;
    setGrowthFactor(factor);
  };
  new PerformanceObserver(decide).observe({ entryTypes: ['gc'] });
}
