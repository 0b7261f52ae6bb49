/**
 * `npm run oracle:drift`: what the newest published Codex, Claude Code and Gemini CLI do
 * differently from the pinned ones (docs/providers.md, "Following the upstream CLIs").
 *
 * It asks the npm registry for each CLI's newest version, installs the three into a temporary
 * folder (install scripts off, engines not enforced, exactly as scripts/install-oracles.mjs installs
 * the pins), then re-runs itself offline in a private network namespace with only loopback up,
 * where the shared checks (codex-check.ts, claude-check.ts, capture-gemini-cli.ts) run each CLI
 * against the recording fakes with telemetry off and a scratch HOME, and compare what it sent or
 * printed with the fixtures of the pinned version. The pinned CLIs themselves (oracles/) are
 * installed first when missing, as `npm test` installs them. The report goes to stdout, the captures'
 * progress to stderr. Exit 0: no drift; 1: drift; 2: it could not run (the line says why and what
 * to do). A newest version equal to the pin is run and compared all the same.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { checkClaude } from './claude-check';
import { checkCodex } from './codex-check';
import { captureGemini, diffGeminiCaptures, geminiFixture, geminiVersionDifferences } from './capture-gemini-cli';
import type { CliModelLists } from './model-ids-drift';
import { diffModelLists, readCliModelLists } from './model-ids-drift';
import type { GeminiCapture } from './capture-gemini-cli';
import type { CliDrift } from './drift-report';
import { driftExitCode, EXIT_COULD_NOT_RUN, formatDrift } from './drift-report';
import type { OraclePackage } from './oracle-clis';
import {
  CLAUDE_CODE,
  CODEX,
  GEMINI_CLI,
  installedVersion,
  lastLine,
  ORACLE_PACKAGES,
  pinnedVersion,
  ROOT,
} from './oracle-clis';

const REGISTER_TS = path.join(ROOT, 'scripts', 'register-ts.cjs');
/** Installs the pinned CLIs into oracles/node_modules (what `npm test` runs first); a no-op when they are current. */
export const INSTALL_ORACLES = path.join(ROOT, 'scripts', 'install-oracles.mjs');
/** Generous bounds for the registry (a slow mirror is not a failure) and for the install of ~1 GB. */
const VIEW_TIMEOUT_MS = 120_000;
const INSTALL_TIMEOUT_MS = 30 * 60_000;

/** The check of each pinned CLI, which tells a broken capture from a changed CLI. */
const PINNED_CHECK: Readonly<Record<OraclePackage, string>> = {
  [CODEX]: '`npm run oracle:codex`',
  [CLAUDE_CODE]: '`npm run oracle:claude`',
  [GEMINI_CLI]: '`npm run oracle:gemini`',
};

/** A reason the command cannot give an answer, with what the user does about it. */
class CouldNotRun extends Error {
  constructor(
    reason: string,
    readonly fix: string,
  ) {
    super(reason);
  }
}

/** `npm view <name> version`: the newest published version. */
export function newestVersion(name: string): string {
  const view = spawnSync('npm', ['view', name, 'version'], { encoding: 'utf8', timeout: VIEW_TIMEOUT_MS });
  const version = (view.stdout ?? '').trim();
  if (view.status !== 0 || !/^\d+\.\d+\.\d+/.test(version))
    throw new CouldNotRun(
      `npm view ${name} version failed (${view.error?.message ?? `exit ${view.status}`}: ${lastLine(view.stderr)})`,
      'make the npm registry reachable (`npm config get registry`, proxy settings) and run it again',
    );
  return version;
}

/**
 * The pinned CLIs of oracles/package.json, which the checks run beside the newest to tell a broken
 * capture from a changed CLI: installed by `installer` (scripts/install-oracles.mjs) when missing or
 * out of date, so a checkout where `npm test` never ran needs nothing else first.
 */
export function installPinned(installer = INSTALL_ORACLES): void {
  // Its progress line and npm's errors go to stderr with the captures'; stdout carries the report only.
  const install = spawnSync(process.execPath, [installer], {
    cwd: ROOT,
    stdio: ['ignore', 2, 2],
    timeout: INSTALL_TIMEOUT_MS,
  });
  if (install.status !== 0)
    throw new CouldNotRun(
      `installing the pinned CLIs of oracles/package.json failed (${install.error?.message ?? `exit ${install.status}`}; its reason is on stderr above)`,
      'run `node scripts/install-oracles.mjs` and fix what it reports (the npm registry, free space), then run oracle:drift again',
    );
}

/** Installs the given versions into `folder` the way the pins are installed; returns its node_modules. */
export function installInto(folder: string, versions: Readonly<Record<string, string>>): string {
  fs.writeFileSync(
    path.join(folder, 'package.json'),
    JSON.stringify({ name: 'oracle-drift', private: true, devDependencies: versions }, null, 2),
  );
  const install = spawnSync(
    'npm',
    ['install', '--ignore-scripts', '--engine-strict=false', '--no-audit', '--no-fund', '--loglevel=error'],
    { cwd: folder, encoding: 'utf8', timeout: INSTALL_TIMEOUT_MS },
  );
  if (install.status !== 0)
    throw new CouldNotRun(
      `npm install of ${Object.entries(versions)
        .map(([name, version]) => `${name}@${version}`)
        .join(', ')} failed (${install.error?.message ?? `exit ${install.status}`}: ${lastLine(install.stderr)})`,
      'make the npm registry reachable and check the free space under the temporary folder (os.tmpdir())',
    );
  return path.join(folder, 'node_modules');
}

/** Runs this file's offline half in a private network namespace with loopback up. */
function runOffline(nodeModules: string, resultFile: string): void {
  const offline = spawnSync(
    'unshare',
    [
      '-n',
      'sh',
      '-c',
      'ip link set lo up && exec "$@"',
      'sh',
      process.execPath,
      '-r',
      REGISTER_TS,
      __filename,
      '--offline',
      nodeModules,
      resultFile,
    ],
    // The captures' progress lines go to stderr; stdout carries the report only.
    { cwd: ROOT, stdio: ['ignore', 2, 2] },
  );
  if (offline.error || !fs.existsSync(resultFile))
    throw new CouldNotRun(
      `the offline run in a private network namespace failed (${offline.error?.message ?? `exit ${offline.status}`})`,
      'run it as root or where `unshare -n` is allowed (user namespaces enabled), with `ip` (iproute2) installed',
    );
}

/** The offline half: every check with the CLIs in `nodeModules`, the results written as JSON. */
async function offline(nodeModules: string, resultFile: string): Promise<void> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'oracle-drift-scratch-'));
  const results: CliDrift[] = [];
  const attempt = async (cli: OraclePackage, check: () => Promise<CliDrift> | CliDrift): Promise<void> => {
    try {
      results.push(await check());
    } catch (error) {
      results.push({
        cli,
        pinned: pinnedVersion(cli),
        newest: safeInstalledVersion(nodeModules, cli),
        failure: {
          reason: error instanceof Error ? error.message : String(error),
          fix: `run ${PINNED_CHECK[cli]} on the pinned CLI: if that passes, the newest ${cli} runs differently and the capture needs to follow it (docs/providers.md, "Following the upstream CLIs")`,
        },
      });
    }
  };
  try {
    await attempt(CODEX, () => {
      const check = checkCodex({ nodeModules, scratch: fs.mkdtempSync(path.join(scratch, 'codex-')) });
      return { cli: CODEX, pinned: check.pinned, newest: check.ran, differences: check.differences };
    });
    // The model ids each CLI knows itself, pinned against newest (no capture asks for every model),
    // read once, inside the first attempt that needs them, so a failure is that CLI's.
    let lists: { pinned: CliModelLists; newest: CliModelLists } | undefined;
    const modelLists = () =>
      (lists ??= {
        pinned: readCliModelLists(path.join(ROOT, 'oracles')),
        newest: readCliModelLists(path.dirname(nodeModules)),
      });
    await attempt(CLAUDE_CODE, () => {
      const check = checkClaude({ nodeModules, scratch: fs.mkdtempSync(path.join(scratch, 'claude-')) });
      const models = diffModelLists(
        'claude-code',
        modelLists().pinned['claude-code'],
        modelLists().newest['claude-code'],
      );
      return {
        cli: CLAUDE_CODE,
        pinned: check.pinned,
        newest: check.ran,
        differences: [...check.differences, ...models],
      };
    });
    await attempt(GEMINI_CLI, async () => {
      const pinned = pinnedVersion(GEMINI_CLI);
      const fixture = geminiFixture(pinned);
      if (!fs.existsSync(fixture))
        throw new Error(`no committed capture ${path.relative(ROOT, fixture)} for the pinned Gemini CLI`);
      const fresh = JSON.parse(JSON.stringify(await captureGemini(nodeModules))) as GeminiCapture;
      const committed = JSON.parse(fs.readFileSync(fixture, 'utf8')) as GeminiCapture;
      return {
        cli: GEMINI_CLI,
        pinned,
        newest: fresh.version,
        differences: [
          ...geminiVersionDifferences(path.basename(fixture), committed, pinned),
          ...diffGeminiCaptures(path.basename(fixture), committed, fresh),
          ...diffModelLists('gemini-cli', modelLists().pinned['gemini-cli'], modelLists().newest['gemini-cli']),
        ],
      };
    });
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  fs.writeFileSync(resultFile, JSON.stringify(results));
}

async function main(): Promise<number> {
  const [mode, nodeModules, resultFile] = process.argv.slice(2);
  if (mode === '--offline') {
    await offline(nodeModules, resultFile);
    return 0;
  }
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'oracle-drift-'));
  try {
    const newest = Object.fromEntries(ORACLE_PACKAGES.map((name) => [name, newestVersion(name)]));
    installPinned();
    process.stderr.write(
      `installing ${Object.entries(newest)
        .map(([name, version]) => `${name}@${version}`)
        .join(', ')} into ${folder}\n`,
    );
    const installed = installInto(folder, newest);
    const result = path.join(folder, 'result.json');
    runOffline(installed, result);
    const results = JSON.parse(fs.readFileSync(result, 'utf8')) as CliDrift[];
    process.stdout.write(formatDrift(results));
    return driftExitCode(results);
  } catch (error) {
    if (!(error instanceof CouldNotRun)) throw error;
    process.stdout.write(`oracle:drift could not run: ${error.message}. Fix: ${error.fix}\n`);
    return EXIT_COULD_NOT_RUN;
  } finally {
    fs.rmSync(folder, { recursive: true, force: true });
  }
}

function safeInstalledVersion(nodeModules: string, cli: OraclePackage): string {
  try {
    return installedVersion(nodeModules, cli);
  } catch {
    return '(not installed)';
  }
}

if (require.main === module)
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stdout.write(
        `oracle:drift could not run: ${error instanceof Error ? error.message : String(error)}. Fix: see the stack trace on stderr and docs/providers.md\n`,
      );
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(EXIT_COULD_NOT_RUN);
    },
  );
