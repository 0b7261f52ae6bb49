/**
 * The only place that reads `process.env` and `process.argv` (docs/design/decisions.md §2); everything else
 * receives the typed AppConfig.
 */
export function processEnvironment(): Record<string, string | undefined> {
  return { ...process.env };
}

export function processArguments(): string[] {
  return process.argv.slice(2);
}

/** How node started this process: what starting it again needs (docs/performance.md "Young generation"). */
export interface NodeInvocation {
  readonly execPath: string;
  readonly execArgv: readonly string[];
  readonly argv: readonly string[];
  readonly env: Record<string, string | undefined>;
}

export function nodeInvocation(): NodeInvocation {
  return { execPath: process.execPath, execArgv: process.execArgv, argv: process.argv, env: processEnvironment() };
}
