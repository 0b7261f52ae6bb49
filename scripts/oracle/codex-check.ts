/**
 * Runs a Codex CLI offline through scripts/capture-codex-oracle.mjs and compares what it sent with
 * the committed fixtures of the pinned version (test/fixtures/codex-oracle/): every request of
 * each capture, the model list the CLI ships with, and the wire effort it sends for each
 * `model_reasoning_effort` setting. `npm run oracle:codex` runs it on the pinned CLI,
 * `npm run oracle:drift` on the newest release (docs/providers.md, "Following the upstream CLIs").
 * The caller runs it inside a loopback-only network namespace.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Difference, Facts, Recorded } from './shape-diff';
import {
  addFact,
  addJsonFacts,
  diffFacts,
  diffRecorded,
  distinctRecorded,
  headerFacts,
  versionDifferences,
} from './shape-diff';
import { missingFixture } from './drift-report';
import {
  CODEX,
  codexBinary,
  installedVersion,
  lastLine,
  ORACLES_NODE_MODULES,
  pinnedVersion,
  ROOT,
} from './oracle-clis';

export const CODEX_FIXTURES = path.join(ROOT, 'test', 'fixtures', 'codex-oracle');
const CAPTURE_SCRIPT = path.join(ROOT, 'scripts', 'capture-codex-oracle.mjs');

/** Connection mechanics of the HTTP and WebSocket libraries, not part of what the backend reads. */
export const CONNECTION_MECHANICS: ReadonlySet<string> = new Set([
  'host',
  'connection',
  'upgrade',
  'sec-websocket-version',
  'sec-websocket-key',
  'sec-websocket-extensions',
  'content-length',
]);

/**
 * A capture against a served list that says something else about gpt-6.1-sol than the CLI's
 * bundled one (`patch` over its entry), optionally with more CLI settings: what the CLI does with
 * the per-model flags the gateway follows (docs/providers.md "What the gateway reads from the list").
 */
function changedListRun(label: string, patch: Record<string, unknown>, config?: string) {
  return {
    name: `gpt-6.1-sol.http.models-served.${label}.capture.json`,
    env: {
      ORACLE_MODEL: 'gpt-6.1-sol',
      ORACLE_TRANSPORT: 'http',
      ORACLE_SERVE_MODELS: '1',
      ORACLE_LABEL: label,
      ORACLE_MODELS_PATCH: JSON.stringify({ 'gpt-6.1-sol': patch }),
      ...(config ? { ORACLE_CONFIG: config } : {}),
    },
  };
}
const level = (effort: string) => ({ effort, description: '' });

/** The changed-list captures (each fixture records its patch and settings as `models_patch` and `config`). */
export const CODEX_CHANGED_LIST_RUNS = [
  changedListRun('live-defaults', { default_reasoning_level: 'high', default_verbosity: 'medium' }),
  changedListRun('effort-dropped', {
    default_reasoning_level: 'medium',
    supported_reasoning_levels: ['medium', 'high', 'xhigh', 'max', 'ultra'].map(level),
  }),
  changedListRun('no-effort-levels', { supported_reasoning_levels: [] }, 'model_reasoning_effort = "high"'),
  changedListRun('no-verbosity', { support_verbosity: false }, 'model_verbosity = "high"'),
  changedListRun('summary-detailed', { default_reasoning_summary: 'detailed' }),
  changedListRun('summary-setting-auto', {}, 'model_reasoning_summary = "auto"'),
  changedListRun('no-summary-parameter', {
    default_reasoning_summary: 'auto',
    supports_reasoning_summary_parameter: false,
  }),
  // What decides `parallel_tool_calls` (false to a lite model): the request shape, not `tool_mode`.
  changedListRun('no-tool-mode', { tool_mode: null }),
  changedListRun('classic-shape', { use_responses_lite: false }),
];

/** A capture compared: fixture name (after `codex-<version>.`) and the capture script's mode. */
export interface CodexRun {
  readonly name: string;
  readonly env: Readonly<Record<string, string>>;
  /** Whether its model-list requests are compared (see codexRequests); yes unless said otherwise. */
  readonly modelListRequests?: boolean;
}

/** The captures compared; every committed capture of the pinned version is one of them. */
export const CODEX_RUNS: readonly CodexRun[] = [
  { name: 'gpt-5.5.capture.json', env: { ORACLE_MODEL: 'gpt-5.5' } },
  { name: 'gpt-5.5.http.capture.json', env: { ORACLE_MODEL: 'gpt-5.5', ORACLE_TRANSPORT: 'http' } },
  { name: 'gpt-6.1-sol.capture.json', env: { ORACLE_MODEL: 'gpt-6.1-sol' } },
  { name: 'gpt-6.1-sol.http.capture.json', env: { ORACLE_MODEL: 'gpt-6.1-sol', ORACLE_TRANSPORT: 'http' } },
  { name: 'gpt-6.1-sol.models-served.capture.json', env: { ORACLE_MODEL: 'gpt-6.1-sol', ORACLE_SERVE_MODELS: '1' } },
  { name: 'gpt-6.1-sol.output-schema.capture.json', env: { ORACLE_MODEL: 'gpt-6.1-sol', ORACLE_OUTPUT_SCHEMA: '1' } },
  // The fake announces an 8 KiB message limit: above the warm-up frame, below a sampling request.
  {
    name: 'gpt-6.1-sol.ws-limit.capture.json',
    env: { ORACLE_MODEL: 'gpt-6.1-sol', ORACLE_WS_MAX_MESSAGE_BYTES: '8192' },
  },
  {
    name: 'gpt-6.1-sol.http.gzip.models-served.capture.json',
    env: { ORACLE_MODEL: 'gpt-6.1-sol', ORACLE_TRANSPORT: 'http', ORACLE_COMPRESS: 'gzip', ORACLE_SERVE_MODELS: '1' },
  },
  // Two user turns in one app-server process (the second chains with previous_response_id). The
  // server asks for the model list both before and after `initialize` names the client, so the
  // originator of its first list request is a race; the other captures compare that request.
  {
    name: 'gpt-5.5.app-server.capture.json',
    env: { ORACLE_MODEL: 'gpt-5.5', ORACLE_APP_SERVER: '1' },
    modelListRequests: false,
  },
  ...CODEX_CHANGED_LIST_RUNS,
];
/** The efforts table covers one Responses-lite and one classic model. */
const EFFORT_MODELS = ['gpt-6.1-sol', 'gpt-5.5'];

interface CaptureEntry {
  readonly kind: string;
  readonly method?: string;
  readonly url?: string;
  readonly headers?: Record<string, unknown>;
  readonly body?: unknown;
}
export interface CodexCapture {
  readonly transcript: readonly CaptureEntry[];
}
export type EffortTable = Record<string, Record<string, { reasoning: unknown; shape: 'lite' | 'classic' }>>;

/**
 * The requests of a capture as Recorded items: turns as they came, and the model-list GETs once
 * per distinct shape, since the CLI asks for the list once or twice per process depending on timing
 * (or not at all with `modelListRequests: false`, see CODEX_RUNS).
 */
export function codexRequests(capture: CodexCapture, options: Pick<CodexRun, 'modelListRequests'> = {}): Recorded[] {
  const requests = capture.transcript
    .filter((entry) => ['http', 'ws-handshake', 'ws-message'].includes(entry.kind))
    .map(codexRequest);
  const isList = (request: Recorded): boolean => request.identity.startsWith('http GET ');
  const lists = options.modelListRequests === false ? [] : distinctRecorded(requests.filter(isList));
  return [...requests.filter((request) => !isList(request)), ...lists];
}

function codexRequest(entry: CaptureEntry): Recorded {
  const [pathname, query] = (entry.url ?? '').split('?');
  const body: Record<string, unknown> =
    entry.body !== null && typeof entry.body === 'object' ? (entry.body as Record<string, unknown>) : {};
  const identity =
    entry.kind === 'ws-message'
      ? `ws-message ${String(body.type)}`
      : [entry.kind, entry.method, pathname].filter(Boolean).join(' ');
  const facts = headerFacts(entry.headers, { ignore: CONNECTION_MECHANICS });
  for (const [name, value] of new URLSearchParams(query ?? '')) addFact(facts, `query ${name}`, value);
  addJsonFacts(facts, 'body ', body);
  // The order of the input items is what the backend replays; the shape facts alone keep only their kinds.
  if (Array.isArray(body.input))
    addFact(
      facts,
      'body input (kinds in order)',
      body.input
        .map((item: { type?: unknown; role?: unknown }) =>
          typeof item.role === 'string' ? `${String(item.type)}:${item.role}` : String(item.type),
        )
        .join(' '),
    );
  return { identity, facts };
}

/** The committed captures of `version` (names after `codex-<version>.`) that no run of CODEX_RUNS re-captures. */
export function codexCapturesWithoutRun(version: string, fixtures = CODEX_FIXTURES): string[] {
  const prefix = `codex-${version}.`;
  return fs
    .readdirSync(fixtures)
    .filter((name) => name.startsWith(prefix) && name.endsWith('.capture.json'))
    .map((name) => name.slice(prefix.length))
    .filter((name) => !CODEX_RUNS.some((run) => run.name === name));
}

/**
 * A fixture whose `codex_version` is not the pin: one recorded by another CLI or edited by hand,
 * which the comparison with a fresh run of the pin would otherwise take for the pin's own.
 */
export function codexVersionDifferences(source: string, fixture: unknown, pinned: string): Difference[] {
  const recorded = (fixture as { codex_version?: unknown } | null)?.codex_version;
  return versionDifferences(source, recorded === undefined ? [] : [recorded], pinned);
}

/** The reduced bundled list (codex-<version>.models.json) by value, keyed by model. */
export function codexModelFacts(models: readonly Record<string, unknown>[]): Facts {
  const facts: Facts = new Map();
  for (const { slug, ...fields } of models) {
    addFact(facts, `model ${String(slug)}`, 'listed');
    addJsonFacts(facts, `model ${String(slug)} `, fields);
  }
  return facts;
}

/** The field paths of the CLI's whole bundled list (`codex debug models --bundled`), by type. */
export function codexListFieldFacts(list: unknown): Facts {
  const facts: Facts = new Map();
  addJsonFacts(facts, 'list ', list, { compare: 'types' });
  return facts;
}

/** The efforts table (codex-<version>.efforts.json) by value: `effort <model>.<setting>.reasoning.effort`. */
export function codexEffortFacts(efforts: EffortTable): Facts {
  const facts: Facts = new Map();
  addJsonFacts(facts, 'effort ', efforts);
  return facts;
}

export interface CodexCheck {
  /** The version whose fixtures were compared (the pin in oracles/package.json). */
  readonly pinned: string;
  /** The version that ran. */
  readonly ran: string;
  readonly differences: Difference[];
  /** The efforts table of the run (check-codex-oracle.mjs --write stores it). */
  readonly efforts: EffortTable;
}

/**
 * Runs every capture with the Codex CLI installed in `nodeModules` and compares it with the
 * fixtures of the pinned version. Captures go to `scratch`, which the caller removes.
 */
export function checkCodex(options: { readonly nodeModules: string; readonly scratch: string }): CodexCheck {
  const pinned = pinnedVersion(CODEX);
  const ran = installedVersion(options.nodeModules, CODEX);
  const differences: Difference[] = [];
  const fixture = (name: string): string => path.join(CODEX_FIXTURES, `codex-${pinned}.${name}`);
  const capture = (env: Readonly<Record<string, string>>, name: string): string => {
    const out = path.join(options.scratch, name);
    const run = spawnSync(process.execPath, [CAPTURE_SCRIPT], {
      env: { ...process.env, ...env, ORACLE_NODE_MODULES: options.nodeModules, ORACLE_OUT: out },
      encoding: 'utf8',
    });
    if (run.status !== 0)
      throw new Error(`the Codex capture ${name} failed (exit ${run.status}): ${lastLine(run.stderr)}`);
    return out;
  };

  for (const name of codexCapturesWithoutRun(pinned))
    differences.push({
      where: path.relative(ROOT, fixture(name)),
      change: 'removed',
      key: 'fixture',
      committed: [
        '(committed, but no run re-captures it: add its mode to CODEX_RUNS in scripts/oracle/codex-check.ts)',
      ],
    });
  for (const run of CODEX_RUNS) {
    const file = fixture(run.name);
    const fresh = readJson<CodexCapture>(capture(run.env, run.name));
    if (!fs.existsSync(file)) {
      differences.push(missingFixture(file));
      continue;
    }
    const committed = readJson<CodexCapture>(file);
    differences.push(
      ...codexVersionDifferences(path.basename(file), committed, pinned),
      ...diffRecorded(path.basename(file), codexRequests(committed, run), codexRequests(fresh, run)),
    );
  }

  // The capture script writes the reduced bundled list beside each capture, named by the version that ran.
  const freshModels = readJson<{ models: Record<string, unknown>[] }>(
    path.join(options.scratch, `codex-${ran}.models.json`),
  ).models;
  const modelsFile = fixture('models.json');
  if (fs.existsSync(modelsFile)) {
    const committed = readJson<{ models: Record<string, unknown>[] }>(modelsFile);
    differences.push(
      ...codexVersionDifferences(path.basename(modelsFile), committed, pinned),
      ...diffFacts(path.basename(modelsFile), codexModelFacts(committed.models), codexModelFacts(freshModels)),
    );
  } else differences.push(missingFixture(modelsFile));
  differences.push(
    ...diffFacts(
      `codex debug models --bundled (${pinned} → ${ran})`,
      codexListFieldFacts(bundledList(path.join(ORACLES_NODE_MODULES), options.scratch)),
      codexListFieldFacts(bundledList(options.nodeModules, options.scratch)),
    ),
  );

  const efforts: EffortTable = {};
  for (const model of EFFORT_MODELS) {
    efforts[model] = {};
    const levels = (freshModels.find((entry) => entry.slug === model)?.supported_reasoning_levels ?? []) as string[];
    for (const effort of levels) {
      const doc = readJson<CodexCapture>(
        capture({ ORACLE_MODEL: model, ORACLE_EFFORT: effort }, `${model}.${effort}.json`),
      );
      const sampling = doc.transcript
        .filter((entry) => entry.kind === 'ws-message' && entry.body !== null && typeof entry.body === 'object')
        .map((entry) => entry.body as Record<string, unknown>)
        .filter((body) => body.generate !== false);
      const wire = [...new Set(sampling.map((body) => JSON.stringify(body.reasoning)))].map(
        (text) => JSON.parse(text) as unknown,
      );
      const lite = sampling.every(
        (body) =>
          (body.client_metadata as Record<string, unknown> | undefined)
            ?.ws_request_header_x_openai_internal_codex_responses_lite === 'true',
      );
      efforts[model][effort] = { reasoning: wire.length === 1 ? wire[0] : wire, shape: lite ? 'lite' : 'classic' };
    }
  }
  const effortsFile = fixture('efforts.json');
  if (fs.existsSync(effortsFile)) {
    const committed = readJson<{ efforts: EffortTable }>(effortsFile);
    differences.push(
      ...codexVersionDifferences(path.basename(effortsFile), committed, pinned),
      ...diffFacts(path.basename(effortsFile), codexEffortFacts(committed.efforts), codexEffortFacts(efforts)),
    );
  } else differences.push(missingFixture(effortsFile));
  return { pinned, ran, differences, efforts };
}

/** `codex debug models --bundled` of the CLI in `nodeModules`, run with a scratch home. */
function bundledList(nodeModules: string, scratch: string): unknown {
  const home = fs.mkdtempSync(path.join(scratch, 'bundled-home-'));
  const run = spawnSync(codexBinary(nodeModules), ['debug', 'models', '--bundled'], {
    env: { PATH: process.env.PATH, HOME: home, CODEX_HOME: home },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.status !== 0)
    throw new Error(`codex debug models --bundled failed (exit ${run.status}): ${lastLine(run.stderr)}`);
  return JSON.parse(run.stdout) as unknown;
}

function readJson<T>(file: string): T {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
}
