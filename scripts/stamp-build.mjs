#!/usr/bin/env node
// Second half of `npm run build` (after tsc): stamps build provenance next to the compiled code
// and copies the JSON data files tsc does not emit unless a module imports them.
//
//   dist/build-info.json  {version, commit, modified, build_date}  read by src/common/build/build-info.ts
//
// version:    BUILD_VERSION, else `git describe --tags`, else `v` + package.json version
// commit:     BUILD_COMMIT, else the full 40-character `git rev-parse HEAD`, else omitted (→ "unknown")
// modified:   whether `git status --porcelain` lists anything (false without git)
// build_date: BUILD_DATE, else SOURCE_DATE_EPOCH, else now; UTC YYYY-MM-DDTHH:MM:SSZ
//
// Works without git (a tarball, a Docker context without .git): every git step has a fallback.
// The same BUILD_* variables also override the stamp at run time (docs/design/decisions.md §6).
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
// The gateway's own rules for these values, loaded as TypeScript (Node strips the types). Node
// notes that it read that file as a module, though package.json gives src/ no "type": expected, so
// `npm run build` runs this with that warning (MODULE_TYPELESS_PACKAGE_JSON) off.
import { buildDateProblem, commitProblem, utcTimestamp } from '../src/core/build-stamp-rules.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SOURCE = path.join(ROOT, 'src');
// BUILD_OUT_DIR lets tests stamp a scratch directory instead of dist/.
const OUT = path.resolve(ROOT, process.env.BUILD_OUT_DIR ?? 'dist');

/** Trimmed stdout of a git command, or undefined when git or the repository is missing. */
function git(...args) {
  try {
    const output = execFileSync('git', args, {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 10_000,
    });
    return output.trim();
  } catch {
    return undefined;
  }
}

const nonEmpty = (value) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);

/** A BUILD_* variable, checked with the rule the gateway applies at start-up (`problem`). */
function buildVariable(name, problem) {
  const value = nonEmpty(process.env[name]);
  const rule = value === undefined ? undefined : problem(value);
  if (rule !== undefined) {
    process.stderr.write(`stamp-build: ${name} ${rule} (got ${JSON.stringify(value.slice(0, 80))})\n`);
    process.exit(1);
  }
  return value;
}

function buildDate() {
  const explicit = buildVariable('BUILD_DATE', buildDateProblem);
  if (explicit) return explicit;
  const epoch = nonEmpty(process.env.SOURCE_DATE_EPOCH);
  if (epoch && /^\d+$/.test(epoch)) return utcTimestamp(new Date(Number(epoch) * 1000));
  return utcTimestamp(new Date());
}

function stamp() {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const head = git('rev-parse', 'HEAD');
  const explicitCommit = buildVariable('BUILD_COMMIT', commitProblem);
  const commit = explicitCommit?.toLowerCase() ?? (head && /^[0-9a-f]{40}$/.test(head) ? head : undefined);
  const status = git('status', '--porcelain');
  const info = {
    version: nonEmpty(process.env.BUILD_VERSION) ?? nonEmpty(git('describe', '--tags')) ?? `v${pkg.version}`,
    ...(commit ? { commit } : {}),
    modified: status !== undefined && status !== '',
    build_date: buildDate(),
  };
  fs.mkdirSync(OUT, { recursive: true });
  fs.writeFileSync(path.join(OUT, 'build-info.json'), `${JSON.stringify(info, null, 2)}\n`);
  return info;
}

/** Every src/**\/*.json except test fixtures, at the same relative path under dist/. */
function copyDataFiles(directory = SOURCE) {
  const copied = [];
  for (const entry of fs.readdirSync(directory, { withFileTypes: true })) {
    const from = path.join(directory, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== '__fixtures__') copied.push(...copyDataFiles(from));
    } else if (entry.name.endsWith('.json')) {
      const to = path.join(OUT, path.relative(SOURCE, from));
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.copyFileSync(from, to);
      copied.push(path.relative(ROOT, to));
    }
  }
  return copied;
}

const info = stamp();
const copied = copyDataFiles();
process.stdout.write(`stamped ${path.relative(ROOT, path.join(OUT, 'build-info.json'))}: ${JSON.stringify(info)}\n`);
process.stdout.write(`copied ${copied.length} data file(s): ${copied.join(', ')}\n`);
