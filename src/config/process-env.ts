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

/** The flags node itself was started with (before the program): where V8's start-up flags sit. */
export function processExecArgv(): string[] {
  return [...process.execArgv];
}
