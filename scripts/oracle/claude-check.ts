/**
 * Runs a Claude Code CLI offline through the provider_c capture scripts
 * (scripts/capture-provider-c-fixtures.ts, scripts/capture-claude-auth-status.mjs) and compares
 * what it printed with the committed fixtures of the pinned version
 * (src/providers/provider-c/__fixtures__/claude-code-<pin>/): per case, the stream-json event kinds
 * and the fields of each with their values, and the `claude auth status --json` answers. The
 * caller runs it inside a loopback-only network namespace (docs/providers.md, "Following the
 * upstream CLIs").
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { missingFixture } from './drift-report';
import { CLAUDE_CODE, installedVersion, lastLine, pinnedVersion, ROOT } from './oracle-clis';
import type { Difference, Facts } from './shape-diff';
import { addJsonFacts, diffFacts, streamJsonFacts, versionDifferences } from './shape-diff';

export const CLAUDE_FIXTURES = path.join(ROOT, 'src', 'providers', 'provider-c', '__fixtures__');

export interface ClaudeCheck {
  readonly pinned: string;
  readonly ran: string;
  readonly differences: Difference[];
}

/**
 * The `claude auth status --json` fixture by value (`auth <case>.<path>`), the CLI's own version
 * aside: a newer release differs there by nature (claudeVersionDifferences holds the fixture to
 * the pin).
 */
export function authStatusFacts(doc: { readonly cases?: unknown; readonly version?: string }): Facts {
  const facts: Facts = new Map();
  addJsonFacts(facts, 'auth ', doc.cases ?? {});
  return facts;
}

/**
 * A fixture recorded by another Claude Code than the pinned one (see versionDifferences): a
 * stream-json case (`text`) by the `claude_code_version` of the lines that carry one, the auth
 * status (`doc`) by its `version`.
 */
export function claudeVersionDifferences(
  source: string,
  fixture: string | { readonly version?: unknown },
  pinned: string,
): Difference[] {
  if (typeof fixture !== 'string')
    return versionDifferences(source, fixture.version === undefined ? [] : [fixture.version], pinned);
  const recorded = fixture
    .split('\n')
    .map((line) => {
      try {
        return (JSON.parse(line) as { claude_code_version?: unknown } | null)?.claude_code_version;
      } catch {
        return undefined;
      }
    })
    .filter((version) => version !== undefined);
  return recorded.length > 0 ? versionDifferences(source, recorded, pinned) : [];
}

/**
 * Runs every capture case with the Claude Code installed in `nodeModules` and compares it with the
 * fixtures of the pinned version. Captures go to `scratch`, which the caller removes.
 */
export function checkClaude(options: { readonly nodeModules: string; readonly scratch: string }): ClaudeCheck {
  const pinned = pinnedVersion(CLAUDE_CODE);
  const ran = installedVersion(options.nodeModules, CLAUDE_CODE);
  const fixtures = path.join(CLAUDE_FIXTURES, `claude-code-${pinned}`);
  const fresh = path.join(options.scratch, 'claude-code');
  fs.mkdirSync(fresh, { recursive: true });
  const env = { ...process.env, ORACLE_NODE_MODULES: options.nodeModules };

  run('scripts/capture-provider-c-fixtures.ts', ['-r', './scripts/register-ts.cjs'], {
    ...env,
    ORACLE_OUT_DIR: fresh,
  });
  const authStatus = path.join(fresh, 'auth-status.json');
  run('scripts/capture-claude-auth-status.mjs', [], { ...env, ORACLE_OUT: authStatus });

  const differences: Difference[] = [];
  const cases = [...new Set([...jsonlFiles(fixtures), ...jsonlFiles(fresh)])].sort();
  for (const name of cases) {
    const committed = path.join(fixtures, name);
    if (!fs.existsSync(committed)) {
      differences.push(missingFixture(committed));
      continue;
    }
    const source = `claude-code-${pinned}/${name}`;
    const freshFile = path.join(fresh, name);
    const text = fs.readFileSync(committed, 'utf8');
    differences.push(
      ...claudeVersionDifferences(source, text, pinned),
      ...diffFacts(
        source,
        streamJsonFacts(text),
        fs.existsSync(freshFile) ? streamJsonFacts(fs.readFileSync(freshFile, 'utf8')) : new Map(),
      ),
    );
  }
  const committedAuth = path.join(fixtures, 'auth-status.json');
  if (fs.existsSync(committedAuth)) {
    const committed = JSON.parse(fs.readFileSync(committedAuth, 'utf8')) as { cases?: unknown; version?: string };
    differences.push(
      ...claudeVersionDifferences(`claude-code-${pinned}/auth-status.json`, committed, pinned),
      ...diffFacts(
        `claude-code-${pinned}/auth-status.json`,
        authStatusFacts(committed),
        authStatusFacts(JSON.parse(fs.readFileSync(authStatus, 'utf8')) as { cases?: unknown }),
      ),
    );
  } else differences.push(missingFixture(committedAuth));
  return { pinned, ran, differences };
}

function jsonlFiles(dir: string): string[] {
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((name) => name.endsWith('.jsonl')) : [];
}

function run(script: string, nodeArgs: readonly string[], env: NodeJS.ProcessEnv): void {
  const result = spawnSync(process.execPath, [...nodeArgs, path.join(ROOT, script)], {
    cwd: ROOT,
    env,
    encoding: 'utf8',
  });
  if (result.status !== 0) {
    throw new Error(`${script} failed (exit ${result.status}): ${lastLine(result.stderr)}`);
  }
}
