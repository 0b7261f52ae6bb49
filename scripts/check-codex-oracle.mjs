// `npm run oracle:codex`: re-runs the pinned Codex CLI offline (scripts/capture-codex-oracle.mjs,
// inside the loopback-only namespace the npm script creates) and reports drift against the
// committed fixtures in test/fixtures/codex-oracle/: header names, body keys and JSON types of
// every request of each capture, the model-list request, and the wire effort the CLI sends for
// each `model_reasoning_effort` setting. Exit status 1 when anything drifted.
//
//   --write   rewrite the effort table (codex-<version>.efforts.json) instead of comparing it
//
// Ids, texts and timings differ by nature and are never compared. Plain JavaScript, like the
// capture script, so it needs nothing but node and the pinned CLI.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// The pinned CLI of oracles/package.json (node scripts/install-oracles.mjs installs it).
const version = JSON.parse(
  fs.readFileSync(path.join(root, 'oracles/node_modules/@openai/codex/package.json'), 'utf8'),
).version;
const fixtures = path.join(root, 'test/fixtures/codex-oracle');
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'codex-oracle-check-'));
const write = process.argv.includes('--write');

/** Connection mechanics of the HTTP and WebSocket libraries, not part of what the backend reads. */
const MECHANICS = new Set([
  'host',
  'connection',
  'upgrade',
  'sec-websocket-version',
  'sec-websocket-key',
  'sec-websocket-extensions',
  'content-length',
]);

function capture(env, name) {
  const out = path.join(scratch, name);
  const run = spawnSync(process.execPath, [path.join(root, 'scripts/capture-codex-oracle.mjs')], {
    env: { ...process.env, ...env, ORACLE_OUT: out },
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`capture ${name} failed: ${run.stderr}`);
  return JSON.parse(fs.readFileSync(out, 'utf8'));
}

const typeOf = (value) => (Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value);
/** One line per request: its kind, header names, and `key:type` of the body and its nested objects. */
function signature(entry) {
  const headers = entry.headers
    ? Object.keys(entry.headers)
        .filter((name) => !MECHANICS.has(name))
        .sort()
    : [];
  const body = entry.body && typeof entry.body === 'object' ? entry.body : {};
  const keys = Object.entries(body)
    .map(([key, value]) => `${key}:${typeOf(value)}`)
    .sort();
  const nested = ['reasoning', 'text', 'client_metadata']
    .flatMap((key) =>
      body[key] && typeof body[key] === 'object'
        ? Object.entries(body[key]).map(([inner, value]) => `${key}.${inner}:${typeOf(value)}`)
        : [],
    )
    .sort();
  const items = Array.isArray(body.input)
    ? body.input.map((item) => `${item.type}${item.role ? `:${item.role}` : ''}`)
    : [];
  return JSON.stringify({
    kind: entry.kind,
    method: entry.method,
    path: (entry.url ?? '').split('?')[0],
    query: (entry.url ?? '').split('?')[1],
    headers,
    keys: [...keys, ...nested],
    items,
  });
}
/**
 * The requests of a capture as comparable lines: turns in order; the model-list GETs as the set of
 * their distinct lines, since the CLI asks for the list once or twice per process depending on timing.
 */
function signatures(doc) {
  const entries = doc.transcript.filter((entry) => ['http', 'ws-handshake', 'ws-message'].includes(entry.kind));
  const isListRequest = (entry) => entry.kind === 'http' && entry.method === 'GET';
  const lists = [...new Set(entries.filter(isListRequest).map(signature))].sort();
  return [...entries.filter((entry) => !isListRequest(entry)).map(signature), ...lists];
}

let drift = 0;
function compare(label, committed, fresh) {
  const want = signatures(committed);
  const got = signatures(fresh);
  const length = Math.max(want.length, got.length);
  let same = true;
  for (let index = 0; index < length; index += 1) {
    if (want[index] === got[index]) continue;
    same = false;
    drift += 1;
    process.stdout.write(
      `DRIFT ${label} request #${index + 1}\n  committed: ${want[index] ?? '(none)'}\n  fresh:     ${got[index] ?? '(none)'}\n`,
    );
  }
  if (same) process.stdout.write(`ok    ${label} (${want.length} distinct requests)\n`);
}

const RUNS = [
  { file: `codex-${version}.gpt-5.5.capture.json`, env: { ORACLE_MODEL: 'gpt-5.5' } },
  { file: `codex-${version}.gpt-5.5.http.capture.json`, env: { ORACLE_MODEL: 'gpt-5.5', ORACLE_TRANSPORT: 'http' } },
  { file: `codex-${version}.gpt-6.1-sol.capture.json`, env: { ORACLE_MODEL: 'gpt-6.1-sol' } },
  {
    file: `codex-${version}.gpt-6.1-sol.http.capture.json`,
    env: { ORACLE_MODEL: 'gpt-6.1-sol', ORACLE_TRANSPORT: 'http' },
  },
  {
    file: `codex-${version}.gpt-6.1-sol.models-served.capture.json`,
    env: { ORACLE_MODEL: 'gpt-6.1-sol', ORACLE_SERVE_MODELS: '1' },
  },
  {
    file: `codex-${version}.gpt-6.1-sol.output-schema.capture.json`,
    env: { ORACLE_MODEL: 'gpt-6.1-sol', ORACLE_OUTPUT_SCHEMA: '1' },
  },
  {
    // The fake announces an 8 KiB message limit: above the warm-up frame, below a sampling request.
    file: `codex-${version}.gpt-6.1-sol.ws-limit.capture.json`,
    env: { ORACLE_MODEL: 'gpt-6.1-sol', ORACLE_WS_MAX_MESSAGE_BYTES: '8192' },
  },
  {
    file: `codex-${version}.gpt-6.1-sol.http.gzip.models-served.capture.json`,
    env: { ORACLE_MODEL: 'gpt-6.1-sol', ORACLE_TRANSPORT: 'http', ORACLE_COMPRESS: 'gzip', ORACLE_SERVE_MODELS: '1' },
  },
];
for (const run of RUNS) {
  const committedPath = path.join(fixtures, run.file);
  if (!fs.existsSync(committedPath)) {
    drift += 1;
    process.stdout.write(
      `DRIFT ${run.file}: no committed fixture for CLI ${version} (capture it with scripts/capture-codex-oracle.mjs)\n`,
    );
    continue;
  }
  compare(run.file, JSON.parse(fs.readFileSync(committedPath, 'utf8')), capture(run.env, run.file));
}

// The wire effort per setting: every effort the bundled list offers, on one lite and one classic model.
const bundled = JSON.parse(fs.readFileSync(path.join(fixtures, `codex-${version}.models.json`), 'utf8')).models;
const efforts = {};
for (const model of ['gpt-6.1-sol', 'gpt-5.5']) {
  efforts[model] = {};
  for (const effort of bundled.find((entry) => entry.slug === model).supported_reasoning_levels) {
    const doc = capture({ ORACLE_MODEL: model, ORACLE_EFFORT: effort }, `${model}.${effort}.json`);
    const sampling = doc.transcript.filter(
      (entry) => entry.kind === 'ws-message' && entry.body && entry.body.generate !== false,
    );
    const wire = [...new Set(sampling.map((entry) => JSON.stringify(entry.body.reasoning)))].map((text) =>
      JSON.parse(text),
    );
    const lite = sampling.every(
      (entry) => entry.body.client_metadata?.ws_request_header_x_openai_internal_codex_responses_lite === 'true',
    );
    efforts[model][effort] = { reasoning: wire.length === 1 ? wire[0] : wire, shape: lite ? 'lite' : 'classic' };
  }
}
const effortsFile = path.join(fixtures, `codex-${version}.efforts.json`);
const table = {
  note: 'reasoning sent by the pinned CLI per model_reasoning_effort setting; written by scripts/check-codex-oracle.mjs --write',
  codex_version: version,
  efforts,
};
if (write) {
  fs.writeFileSync(effortsFile, JSON.stringify(table, null, 2) + '\n');
  process.stdout.write(`wrote ${effortsFile}\n`);
} else if (
  !fs.existsSync(effortsFile) ||
  JSON.stringify(JSON.parse(fs.readFileSync(effortsFile, 'utf8')).efforts) !== JSON.stringify(efforts)
) {
  drift += 1;
  process.stdout.write(`DRIFT efforts: the CLI now sends\n${JSON.stringify(efforts, null, 2)}\n`);
} else
  process.stdout.write(
    `ok    efforts (${Object.keys(efforts)
      .map((model) => `${model}: ${Object.keys(efforts[model]).join(', ')}`)
      .join('; ')})\n`,
  );

fs.rmSync(scratch, { recursive: true, force: true });
process.stdout.write(
  drift === 0
    ? `no drift against Codex CLI ${version}\n`
    : `${drift} difference(s): re-capture the fixtures and update the gateway (docs/providers.md)\n`,
);
process.exit(drift === 0 ? 0 : 1);
