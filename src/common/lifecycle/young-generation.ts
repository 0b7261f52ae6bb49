/**
 * The bound on V8's young generation (docs/performance.md "Young generation"). V8 reads it only
 * from node's own command line or NODE_OPTIONS when the process starts, so it is given where node
 * is started: the image's CMD, the Kubernetes manifests and `npm start` (scripts/start.mjs, which
 * reads this file from dist/). The gateway itself only reports the bound in force.
 */

/** Node's flag for the largest semi-space, in MiB. */
export const SEMI_SPACE_FLAG = '--max-semi-space-size';

/** The semi-space bound every documented start passes (MiB); V8 alone grows it to 32 on a large machine. */
export const SEMI_SPACE_MIB = 8;

/** The flag as the image, the manifests and `npm start` give it. */
export const SEMI_SPACE_ARGUMENT = `${SEMI_SPACE_FLAG}=${SEMI_SPACE_MIB}`;

/** The flag as node accepts it (dashes or underscores, `=` and a whole number of MiB). */
const FLAG_WITH_VALUE = /^--max[-_]semi[-_]space[-_]size=(\d+)$/;

/**
 * The semi-space bound node was started with, in MiB, from its command line (`execArgv`) or
 * NODE_OPTIONS; the command line wins, as in node. `undefined` when neither sets one: V8's own growth.
 */
export function startedSemiSpaceMib(execArgv: readonly string[], nodeOptions: string | undefined): number | undefined {
  return lastFlagValue(execArgv) ?? lastFlagValue((nodeOptions ?? '').split(/\s+/));
}

/** V8 applies flags in order, so the last one given is the one in force. */
function lastFlagValue(args: readonly string[]): number | undefined {
  const values = args.map((arg) => FLAG_WITH_VALUE.exec(arg)?.[1]).filter((value) => value !== undefined);
  return values.length > 0 ? Number(values[values.length - 1]) : undefined;
}
