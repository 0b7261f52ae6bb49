/**
 * Where the vendor CLIs live and which versions are pinned. The pins are oracles/package.json's;
 * the fixtures of each CLI are named after its pin, so a re-pin with re-captured fixtures needs no
 * change here. Any other install of the same packages (the newest releases `npm run oracle:drift`
 * installs into a temporary folder) is addressed by its node_modules folder, which the capture
 * scripts take as ORACLE_NODE_MODULES (docs/providers.md, "Following the upstream CLIs").
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export const ROOT = path.resolve(__dirname, '..', '..');
export const ORACLES_NODE_MODULES = path.join(ROOT, 'oracles', 'node_modules');

export const CODEX = '@openai/codex';
export const CLAUDE_CODE = '@anthropic-ai/claude-code';
export const GEMINI_CLI = '@google/gemini-cli';
export const ORACLE_PACKAGES = [CODEX, CLAUDE_CODE, GEMINI_CLI] as const;
export type OraclePackage = (typeof ORACLE_PACKAGES)[number];

/** The version oracles/package.json pins for `name`. */
export function pinnedVersion(name: OraclePackage, manifest = path.join(ROOT, 'oracles', 'package.json')): string {
  const pins = (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { devDependencies?: Record<string, string> })
    .devDependencies;
  const pin = pins?.[name];
  if (!pin) throw new Error(`oracles/package.json pins no ${name}`);
  return pin;
}

/** The version of `name` installed in `nodeModules`. */
export function installedVersion(nodeModules: string, name: OraclePackage): string {
  return (JSON.parse(fs.readFileSync(path.join(nodeModules, name, 'package.json'), 'utf8')) as { version: string })
    .version;
}

/** The native Codex executable of the platform package npm installed as an optional dependency. */
export function codexBinary(nodeModules: string): string {
  const arch = process.arch === 'arm64' ? 'aarch64' : 'x86_64';
  return path.join(
    nodeModules,
    '@openai',
    `codex-${process.platform}-${process.arch}`,
    'vendor',
    `${arch}-unknown-linux-musl`,
    'bin',
    'codex',
  );
}

/** The native Claude Code executable (install scripts are not run, so the platform package's binary is called). */
export function claudeBinary(nodeModules: string): string {
  const candidates = [
    `claude-code-${process.platform}-${process.arch}`,
    `claude-code-${process.platform}-${process.arch}-musl`,
  ].map((name) => path.join(nodeModules, '@anthropic-ai', name, 'claude'));
  return candidates.find((candidate) => fs.existsSync(candidate)) ?? candidates[0];
}

/** The Gemini CLI's bundled entry point (run with node). */
export function geminiEntry(nodeModules: string): string {
  return path.join(nodeModules, '@google', 'gemini-cli', 'bundle', 'gemini.js');
}

/**
 * The last line of a tool's stderr that says something: the one-line reason a failed run reports.
 * A Node process that died of an uncaught error ends its stderr with the stack and Node's version
 * (`Node.js v24.21.0`); the error's own line above them is the reason.
 */
export function lastLine(text: string | null | undefined): string {
  return (
    (text ?? '')
      .trim()
      .split('\n')
      .filter((line) => line.trim() !== '' && !/^Node\.js v\d/.test(line) && !/^\s+at /.test(line))
      .pop() ?? '(no output)'
  );
}
