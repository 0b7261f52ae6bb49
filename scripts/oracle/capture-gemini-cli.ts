/**
 * Oracle capture: runs the real Gemini CLI (the pinned `@google/gemini-cli`) against the
 * project's Code Assist fake and writes every request the CLI sent (order, method, path,
 * headers, body) to a JSON file, with bearer values and machine-specific text redacted.
 *
 * Run it inside a loopback-only network namespace so nothing can leave the machine
 * (`npm run oracle:gemini` does, and with `--check` compares a fresh capture with the committed one):
 *
 *   unshare -n sh -c 'ip link set lo up; node -r ./scripts/register-ts.cjs \
 *     scripts/oracle/capture-gemini-cli.ts src/providers/provider-b/__fixtures__/gemini-cli-0.61.0.capture.json'
 *
 * `--check` alone compares with the capture of the pinned version (oracles/package.json); the
 * comparison is scripts/oracle/shape-diff.ts, shared with `npm run oracle:drift`, which imports
 * captureGemini to run the newest release the same way.
 *
 * Scenarios (SCENARIOS): headless turns (`-p … --output-format stream-json`). The first has the
 * fake answer a `list_directory` call and then a short text, so the capture holds the setup calls
 * and two `streamGenerateContent` envelopes (with tool declarations, then with the function
 * response); the others are set-up through onboarding, a Gemini 3 model, and a set-up refused by
 * VPC Service Controls, each with a text turn. The CLI is told to send no telemetry, usage statistics or update checks,
 * and every proxy variable points at a refusing loopback port.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { FakeRecordedRequest } from '../../test/support/fake-provider-b';
import { FakeCodeAssist } from '../../test/support/fake-provider-b';
import {
  callFrame,
  enqueueOnboardingThroughOperation,
  finishFrame,
  PERIMETER_REFUSAL,
  textFrame,
} from '../../test/support/provider-b-fixtures';
import { driftExitCode, formatDrift } from './drift-report';
import { geminiEntry, GEMINI_CLI, installedVersion, ORACLES_NODE_MODULES, pinnedVersion, ROOT } from './oracle-clis';
import type { Difference, Facts, Recorded } from './shape-diff';
import { addFact, addJsonFacts, diffRecorded, headerFacts, versionDifferences } from './shape-diff';

const ACCESS_TOKEN = 'ya29.fake-oracle-access-token';
const PROMPT = 'List the files in the current directory, then say done.';
const MODEL = 'gemini-2.5-pro';

interface Scenario {
  readonly name: string;
  readonly description: string;
  readonly env: Record<string, string>;
  /** `-m`: MODEL unless the scenario is about another model. */
  readonly model?: string;
  script(fake: FakeCodeAssist): void;
}

/** A loadCodeAssist answer naming a current tier and the project `fake-project`. */
function discoveredProject(fake: FakeCodeAssist): void {
  fake.enqueue('loadCodeAssist', {
    body: {
      currentTier: { id: 'standard-tier', name: 'Gemini Code Assist' },
      cloudaicompanionProject: 'fake-project',
    },
  });
}

function textTurn(fake: FakeCodeAssist): void {
  fake.enqueue('streamGenerateContent', {
    frames: [{ json: textFrame('done') }, { json: finishFrame('STOP', { prompt: 9, candidates: 1 }) }],
  });
}

const SCENARIOS: readonly Scenario[] = [
  {
    name: 'discovered-project-tool-turn',
    description:
      'no project configured; loadCodeAssist answers a current tier and project; the fake answers a list_directory call, then text',
    env: {},
    script: (fake) => {
      discoveredProject(fake);
      fake.enqueue('streamGenerateContent', {
        frames: [
          { json: callFrame('list_directory', { dir_path: '.' }, { signature: 'oracle-signature' }) },
          { json: finishFrame('STOP', { prompt: 5, candidates: 2 }) },
        ],
      });
      fake.enqueue('streamGenerateContent', {
        frames: [{ json: textFrame('done') }, { json: finishFrame('STOP', { prompt: 9, candidates: 1 }) }],
      });
    },
  },
  {
    name: 'configured-project-onboarding',
    description:
      'GOOGLE_CLOUD_PROJECT=oracle-project-123; loadCodeAssist answers no current tier (standard-tier allowed, default); onboardUser answers a pending operation that one GET completes; then a text turn',
    env: { GOOGLE_CLOUD_PROJECT: 'oracle-project-123' },
    script: (fake) => {
      enqueueOnboardingThroughOperation(fake, 'oracle-project-123');
      textTurn(fake);
    },
  },
  {
    name: 'gemini-3-text-turn',
    description:
      '-m gemini-3.5-flash (sent to Code Assist as gemini-3-flash, configured by the CLI as a Gemini 3 model); discovered project; a text turn',
    env: {},
    model: 'gemini-3.5-flash',
    script: (fake) => {
      discoveredProject(fake);
      textTurn(fake);
    },
  },
  {
    name: 'vpc-sc-configured-project',
    description:
      'GOOGLE_CLOUD_PROJECT=perimeter-project; loadCodeAssist refused by VPC Service Controls (403, ErrorInfo SECURITY_POLICY_VIOLATED); a text turn',
    env: { GOOGLE_CLOUD_PROJECT: 'perimeter-project' },
    script: (fake) => {
      fake.enqueue('loadCodeAssist', PERIMETER_REFUSAL);
      textTurn(fake);
    },
  },
];

/** The capture of every scenario with the Gemini CLI installed in `nodeModules` (the pinned one by default). */
export async function captureGemini(nodeModules = ORACLES_NODE_MODULES) {
  const version = installedVersion(nodeModules, GEMINI_CLI);
  const scenarios = [];
  for (const scenario of SCENARIOS) scenarios.push(await capture(scenario, geminiEntry(nodeModules)));
  return {
    cli: GEMINI_CLI,
    version,
    node: process.version,
    capturedAt: new Date().toISOString().slice(0, 10),
    command: `gemini -m <model> -p <prompt> --output-format stream-json`,
    scenarios,
  };
}

/** The committed capture of Gemini CLI `version`. */
export function geminiFixture(version: string): string {
  return path.join(ROOT, 'src', 'providers', 'provider-b', '__fixtures__', `gemini-cli-${version}.capture.json`);
}

/** A capture as written to the fixture (the shape of what captureGemini returns, read back as JSON). */
export interface GeminiCapture {
  readonly version: string;
  readonly scenarios: readonly {
    readonly name: string;
    readonly exitCode: number | null;
    readonly requests: readonly unknown[];
  }[];
}

async function main(): Promise<void> {
  const [first, second] = process.argv.slice(2);
  const checking = first === '--check';
  // --check without a file compares with the fixture of the version oracles/package.json pins.
  const target = checking ? (second ?? geminiFixture(pinnedVersion(GEMINI_CLI))) : first;
  if (!target) throw new Error('usage: capture-gemini-cli.ts <output.json> | --check [<committed-fixture.json>]');
  const fixture = await captureGemini();
  for (const scenario of fixture.scenarios)
    process.stdout.write(`${scenario.name}: ${scenario.requests.length} requests, exit ${scenario.exitCode}\n`);
  if (!checking) {
    fs.writeFileSync(target, `${JSON.stringify(fixture, null, 2)}\n`);
    return;
  }
  // --check: does the committed fixture still describe what the installed CLI sends?
  const committed = JSON.parse(fs.readFileSync(target, 'utf8')) as GeminiCapture;
  const fresh = JSON.parse(JSON.stringify(fixture)) as GeminiCapture;
  const results = [
    {
      cli: GEMINI_CLI,
      pinned: pinnedVersion(GEMINI_CLI),
      newest: fixture.version,
      differences: [
        ...geminiVersionDifferences(path.basename(target), committed, pinnedVersion(GEMINI_CLI)),
        ...diffGeminiCaptures(path.basename(target), committed, fresh),
      ],
    },
  ];
  process.stdout.write(formatDrift(results, 'installed'));
  process.exitCode = driftExitCode(results);
}

/** Compares two captures scenario by scenario (docs/providers.md, "Following the upstream CLIs"). */
export function diffGeminiCaptures(source: string, committed: GeminiCapture, fresh: GeminiCapture): Difference[] {
  const names = [...new Set([...committed.scenarios, ...fresh.scenarios].map((scenario) => scenario.name))];
  return names.flatMap((name) =>
    diffRecorded(
      `${source}`,
      geminiRequests(committed.scenarios.find((scenario) => scenario.name === name)),
      geminiRequests(fresh.scenarios.find((scenario) => scenario.name === name)),
    ).map((difference) => ({ ...difference, where: difference.where.replace(' · ', ` · ${name}: `) })),
  );
}

/** A capture recorded by another Gemini CLI than the pinned one (see versionDifferences). */
export function geminiVersionDifferences(source: string, committed: GeminiCapture, pinned: string): Difference[] {
  return versionDifferences(source, committed.version === undefined ? [] : [committed.version], pinned);
}

/**
 * What must not drift: calls, headers by value (Node's version masked, bearer redacted), bodies by
 * value (the envelope `model`, `generationConfig` and its `thinkingConfig` are what the gateway
 * copies; ids and clocks are masked, and the capture already holds the CLI's prose as `<text>`),
 * and the exit code.
 */
export function geminiRequests(scenario: GeminiCapture['scenarios'][number] | undefined): Recorded[] {
  if (!scenario) return [];
  const requests = scenario.requests.map((entry): Recorded => {
    const request = entry as {
      route: string;
      method: string;
      path: string;
      query?: Record<string, unknown>;
      headers: Record<string, unknown>;
      body: unknown;
    };
    const facts = headerFacts(request.headers, { allValues: true });
    for (const [name, value] of Object.entries(request.query ?? {})) addFact(facts, `query ${name}`, String(value));
    addJsonFacts(facts, 'body ', request.body);
    return { identity: `${request.method} ${request.path}`, facts };
  });
  const exit: Facts = new Map([['exit code', new Set([String(scenario.exitCode)])]]);
  return [...requests, { identity: 'process', facts: exit }];
}

async function capture(scenario: Scenario, cli: string) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'gemini-oracle-'));
  const workdir = path.join(home, 'work');
  fs.mkdirSync(workdir);
  fs.writeFileSync(path.join(workdir, 'README.md'), 'oracle workspace\n');
  writeCliHome(home);
  const fake = await FakeCodeAssist.start();
  scenario.script(fake);
  try {
    const endpoint = fake.baseUrl.replace(/\/v1internal$/, '');
    const result = await runCli(cli, home, workdir, endpoint, scenario.env, scenario.model ?? MODEL);
    if (result.code !== 0) process.stderr.write(result.stderr.slice(-4000));
    return {
      name: scenario.name,
      description: scenario.description,
      model: scenario.model ?? MODEL,
      exitCode: result.code,
      requests: fake.requests().map((request) => redact(request, home)),
    };
  } finally {
    await fake.close();
    fs.rmSync(home, { recursive: true, force: true });
  }
}

/** A private Gemini CLI home: a far-future login (never refreshed) and every phone-home switch off. */
function writeCliHome(home: string): void {
  const dir = path.join(home, '.gemini');
  fs.mkdirSync(dir, { recursive: true });
  const creds = {
    access_token: ACCESS_TOKEN,
    refresh_token: '1//fake-oracle-refresh',
    token_type: 'Bearer',
    scope: 'https://www.googleapis.com/auth/cloud-platform',
    expiry_date: Date.now() + 10 * 365 * 86_400_000,
  };
  fs.writeFileSync(path.join(dir, 'oauth_creds.json'), JSON.stringify(creds, null, 2), { mode: 0o600 });
  const settings = {
    security: { auth: { selectedType: 'oauth-personal' }, folderTrust: { enabled: false } },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    ui: { hideTips: true },
  };
  fs.writeFileSync(path.join(dir, 'settings.json'), JSON.stringify(settings, null, 2));
}

function runCli(
  cli: string,
  home: string,
  cwd: string,
  endpoint: string,
  extraEnv: Record<string, string>,
  model: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const refusing = 'http://127.0.0.1:9';
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    TERM: 'dumb',
    CODE_ASSIST_ENDPOINT: endpoint,
    // With only oauth_creds.json the CLI first validates the login at Google's tokeninfo endpoint,
    // which cannot be reached here (it then exits 41, "Manual authorization is required"). The
    // CLI's own access-token switch takes the same Code Assist path and headers without that call.
    GOOGLE_GENAI_USE_GCA: 'true',
    GOOGLE_CLOUD_ACCESS_TOKEN: ACCESS_TOKEN,
    ...extraEnv,
    GEMINI_CLI_NO_RELAUNCH: 'true',
    HTTPS_PROXY: refusing,
    HTTP_PROXY: refusing,
    ALL_PROXY: refusing,
    NO_PROXY: '127.0.0.1,localhost',
  };
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, '-m', model, '-p', PROMPT, '--output-format', 'stream-json'], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Bearer values never reach the fixture, and neither does the CLI's own prose (its system prompt,
 * tool descriptions, session context): every `text`, `description` and `output` string becomes
 * `<text>`. What the backend sees as structure — keys, types, ids, schemas — stays.
 */
function redact(request: FakeRecordedRequest, home: string): unknown {
  const headers = { ...request.headers };
  if (typeof headers.authorization === 'string')
    headers.authorization = headers.authorization.replace(/^Bearer .+$/, 'Bearer <redacted>');
  delete headers.host;
  delete headers['content-length'];
  const body = JSON.parse(
    JSON.stringify(request.body ?? null)
      .split(home)
      .join('<home>'),
    (key, value: unknown) => (typeof value === 'string' && PROSE_KEYS.has(key) ? '<text>' : value),
  );
  return { route: request.route, method: request.method, path: request.path, query: request.query, headers, body };
}

const PROSE_KEYS = new Set(['text', 'description', 'output']);

if (require.main === module)
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(2);
  });
