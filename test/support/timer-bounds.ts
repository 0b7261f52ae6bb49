/**
 * An idle or turn bound a test sets so that it fires (GATEWAY_STREAM_IDLE_TIMEOUT, a family's turn
 * timeout, a structured deadline_ms). The bound also covers what comes before the first upstream
 * event (token, connect, handshake, the request itself), so it must outlast those on a loaded
 * machine: two CPUs beside a CPU-heavy job stretch them past a few hundred milliseconds. Each test
 * that lets it fire waits this long, so it is no longer than that margin needs.
 */
export const FIRING_BOUND_MS = 1_500;

/** `FIRING_BOUND_MS` as a duration setting. */
export const FIRING_BOUND = `${FIRING_BOUND_MS}ms`;

/** How long a held upstream step lasts in a test whose bound is `FIRING_BOUND`: well past it. */
export const PAST_FIRING_BOUND_MS = 5_000;
