/*
 * The formats of a build's provenance, as the health document promises them (docs/endpoints.md
 * "Health document"). The gateway applies them to the BUILD_* settings at start-up and
 * scripts/stamp-build.mjs to the same variables at build time, loading this file as it is (Node
 * strips its types): so it imports nothing and uses only syntax that types can be erased from.
 */

/** `YYYY-MM-DDTHH:MM:SSZ` (the contract's build_date format). */
export function utcTimestamp(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** What is wrong with a commit id (the full 40 hexadecimal characters), or undefined. */
export function commitProblem(value: string): string | undefined {
  return /^[0-9a-fA-F]{40}$/.test(value) ? undefined : 'must be a full 40-character hexadecimal commit id';
}

/**
 * What is wrong with a build date, or undefined: it must be `YYYY-MM-DDTHH:MM:SSZ` of an instant
 * that exists. Date.parse takes days the month does not have (2026-02-30 as 2026-03-02) and
 * 24:00:00, so the value must read back as written.
 */
export function buildDateProblem(value: string): string | undefined {
  const time = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/.test(value) || Number.isNaN(time)) {
    return 'must be a UTC timestamp YYYY-MM-DDTHH:MM:SSZ';
  }
  if (utcTimestamp(new Date(time)) !== value) {
    return 'must be a UTC timestamp YYYY-MM-DDTHH:MM:SSZ that exists (a day of its month, hours 00 to 23)';
  }
  return undefined;
}
