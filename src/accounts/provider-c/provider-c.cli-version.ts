import { execFile } from 'node:child_process';
import * as os from 'node:os';

/** `claude --version` prints at once (no login, no network); beyond this the binary is stuck. */
const VERSION_TIMEOUT_MS = 10_000;

/**
 * The installed Claude Code version, the one place the gateway keeps it: asked once per
 * executable (`claude --version`, bounded, never awaited by the boot) by the login report at
 * startup, and named by the error mapping when the API refuses a model to this version
 * (docs/error-codes.md). A run's own `init` line names its version too and is preferred there;
 * this is what is known without a turn.
 */
const probes = new Map<string, Promise<string | undefined>>();
let lastKnown: string | undefined;

/** The version `executable --version` prints (`2.1.332 (Claude Code)` → `2.1.332`), asked once per executable. */
export function claudeCodeVersion(
  executable: string,
  env: Readonly<Record<string, string>>,
): Promise<string | undefined> {
  let probe = probes.get(executable);
  if (probe === undefined) {
    probe = askVersion(executable, env).then((version) => {
      if (version !== undefined) lastKnown = version;
      return version;
    });
    probes.set(executable, probe);
  }
  return probe;
}

/** The version the last answered probe found, or undefined before any answered. */
export function installedClaudeCodeVersion(): string | undefined {
  return lastKnown;
}

function askVersion(executable: string, env: Readonly<Record<string, string>>): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(
      executable,
      ['--version'],
      { env, cwd: os.tmpdir(), timeout: VERSION_TIMEOUT_MS, maxBuffer: 64 * 1024 },
      (_error, stdout) => resolve(parseClaudeVersion(stdout)),
    );
  });
}

/** The leading dotted version of `claude --version`'s answer, else undefined (not a Claude Code binary). */
export function parseClaudeVersion(stdout: string): string | undefined {
  const match = /^\s*(\d+\.\d+\.\d+(?:[-+][\w.]+)?)\s+\(Claude Code\)/.exec(stdout);
  return match?.[1];
}
