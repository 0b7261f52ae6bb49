import type { NodeInvocation } from '../../config/process-env';

/** Node's own bound on a semi-space (MiB), which V8 reads only when the process starts. */
const NODE_SEMI_SPACE_FLAG = '--max-semi-space-size';

/** The flag as node accepts it (dashes or underscores, `=` and a whole number of MiB). */
const FLAG_WITH_VALUE = /^--max[-_]semi[-_]space[-_]size=(\d+)$/;

/**
 * The semi-space bound node was started with, in MiB, from its command line (`execArgv`) or
 * NODE_OPTIONS; the command line wins, as in node. `undefined` when neither sets one.
 */
export function startedSemiSpaceMib(execArgv: readonly string[], nodeOptions: string | undefined): number | undefined {
  return lastFlagValue(execArgv) ?? lastFlagValue((nodeOptions ?? '').split(/\s+/));
}

/** V8 applies flags in order, so the last one given is the one in force. */
function lastFlagValue(args: readonly string[]): number | undefined {
  const values = args.map((arg) => FLAG_WITH_VALUE.exec(arg)?.[1]).filter((value) => value !== undefined);
  return values.length > 0 ? Number(values[values.length - 1]) : undefined;
}

/**
 * The node arguments to start again with so that V8 bounds its semi-space at `capMib`
 * (GATEWAY_MAX_SEMI_SPACE_MIB), or `undefined` when this process should go on as it is: the cap is
 * off (0), or node was started with its own bound, which is the operator's explicit choice.
 */
export function semiSpaceRestartArgs(capMib: number, node: NodeInvocation): string[] | undefined {
  if (capMib <= 0 || startedSemiSpaceMib(node.execArgv, node.env.NODE_OPTIONS) !== undefined) return undefined;
  return [node.execPath, `${NODE_SEMI_SPACE_FLAG}=${capMib}`, ...node.execArgv, ...node.argv.slice(1)];
}

/** Node's `process.execve`: replaces this process, or throws where the platform has none. */
type Execve = (file: string, args: readonly string[], env: Record<string, string | undefined>) => never;

/**
 * Bounds V8's young generation at `capMib` MiB semi-spaces (docs/performance.md "Young
 * generation"). V8 takes the bound only from node's command line, so a gateway started as
 * `node dist/main.js` replaces itself once, before the framework loads, with the same program,
 * arguments and environment plus `--max-semi-space-size`: same process id, same open stdio, so a
 * supervisor or Kubernetes sees one process. Where node cannot replace a process (Windows), this
 * one goes on unbounded and the answer says why, for the start-up log. (Once node has called the
 * system's execve, a failure aborts the process: node's own behaviour, which no caller can catch.)
 * Hand-written because no library sets V8 start-up flags for a running program.
 */
export function capSemiSpace(
  capMib: number,
  node: NodeInvocation,
  execve: Execve | null = process.execve?.bind(process) ?? null,
): string | undefined {
  const args = semiSpaceRestartArgs(capMib, node);
  if (!args) return undefined;
  if (!execve) return 'this node cannot replace a running process (it has no process.execve)';
  try {
    execve(node.execPath, args, node.env);
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    return `node could not restart itself with ${NODE_SEMI_SPACE_FLAG}: ${code ?? message}`;
  }
}

/** The semi-space bound in force in this process, for the start-up line: `null` is V8's own growth. */
export function semiSpaceMibInForce(node: NodeInvocation): number | null {
  return startedSemiSpaceMib(node.execArgv, node.env.NODE_OPTIONS) ?? null;
}
