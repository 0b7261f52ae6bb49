import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLAUDE_CODE_PIN } from './oracle-pins';

/**
 * The pinned real Claude Code binary (`@anthropic-ai/claude-code` in oracles/package.json,
 * installed by scripts/install-oracles.mjs, which `npm test` runs first). Install
 * scripts are not run, so the executable of the platform package installed as an optional
 * dependency (`@anthropic-ai/claude-code-linux-x64` on this machine and in CI) is called directly.
 * A missing binary fails the real-CLI specs with this message rather than skipping them: they are
 * what proves provider_c against the real program.
 */
export const REAL_CLAUDE_PATH = locateRealClaude();

function locateRealClaude(): string {
  const executable = process.platform === 'win32' ? 'claude.exe' : 'claude';
  const candidates = [
    `claude-code-${process.platform}-${process.arch}`,
    `claude-code-${process.platform}-${process.arch}-musl`,
  ].map((name) => path.join(__dirname, '..', '..', 'oracles', 'node_modules', '@anthropic-ai', name, executable));
  const found = candidates.find((candidate) => fs.existsSync(candidate));
  if (!found)
    throw new Error(
      `the real Claude Code binary is not installed (looked for ${candidates.join(', ')}); run \`node scripts/install-oracles.mjs\` (\`npm test\` and .ci/run do it first)`,
    );
  return found;
}

/** The version the fixtures under src/providers/provider-c/__fixtures__/ were recorded with: the pin. */
export const REAL_CLAUDE_VERSION = CLAUDE_CODE_PIN;

/** A stand-in subscription token: the CLI sends it as `Authorization: Bearer …` to the fake API. */
export const FAKE_OAUTH_TOKEN = 'fake-oauth-token-for-tests';

/**
 * The settings of a gateway serving provider_c with the real CLI, whose children talk to the fake
 * Messages API at `apiBaseUrl` from the private `home` (see realClaudeEnvironment).
 */
export function realClaudeGatewaySettings(apiBaseUrl: string, home: string): Record<string, string> {
  return {
    GATEWAY_PROVIDERS: 'provider_c',
    PROVIDER_C_COMMAND: REAL_CLAUDE_PATH,
    PROVIDER_C_TIMEOUT: '20s',
    ...realClaudeEnvironment({ apiBaseUrl, home }),
  };
}

/**
 * Environment for the real CLI (handed to it through the gateway, which passes its environment to
 * the child): a private `HOME`, the fake Messages API as `ANTHROPIC_BASE_URL`, a login token unless
 * `loggedIn` is false, and every proxy pointed at a refusing loopback port so a stray request dies
 * on loopback instead of leaving the machine. The CLI's telemetry and other non-essential traffic
 * are left to the gateway's own defaults (`claudeChildEnvironment`), which the specs thereby run.
 */
export function realClaudeEnvironment(options: {
  readonly apiBaseUrl: string;
  readonly home: string;
  readonly loggedIn?: boolean;
}): Record<string, string> {
  const deadEnd = 'http://127.0.0.1:9';
  return {
    HOME: options.home,
    ANTHROPIC_BASE_URL: options.apiBaseUrl,
    ...(options.loggedIn === false ? {} : { CLAUDE_CODE_OAUTH_TOKEN: FAKE_OAUTH_TOKEN }),
    HTTPS_PROXY: deadEnd,
    HTTP_PROXY: deadEnd,
    ALL_PROXY: deadEnd,
    NO_PROXY: '127.0.0.1,localhost',
  };
}
