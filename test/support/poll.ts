import { WAIT_GUARD_MS } from './fake-provider-a';

/**
 * Polls until `check` holds; throws naming `what` after `timeoutMs`. The bound is a hang guard,
 * never a speed requirement.
 */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  timeoutMs = WAIT_GUARD_MS,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Reads until `check` accepts the value, or returns the last value read after `boundMs`, so the
 * caller's assertion shows what was seen. The bound is generous and never asserted as a speed.
 */
export async function pollUntil<T>(read: () => Promise<T>, check: (value: T) => boolean, boundMs = 20_000): Promise<T> {
  const end = Date.now() + boundMs;
  for (;;) {
    const value = await read();
    if (check(value) || Date.now() > end) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
