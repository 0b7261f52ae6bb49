// Captures what the real Codex CLI sends to the ChatGPT Codex backend, for the provider_a oracle
// fixture (test/fixtures/codex-oracle/). It starts a recording fake of the backend on 127.0.0.1,
// points a private CODEX_HOME (fake ChatGPT login, telemetry and update checks off) at it, runs
// `codex exec` for a turn that makes one tool call, then `codex exec resume --last` for a second
// user turn, and writes every handshake, POST and response.create body it saw with tokens
// redacted.
//
// Run it only inside a loopback-only network namespace (the common brief's rule), e.g.
//   unshare -n sh -c 'ip link set lo up; node scripts/capture-codex-oracle.mjs'
//
// Modes (environment):
//   ORACLE_MODEL, ORACLE_TRANSPORT=http, ORACLE_APP_SERVER=1   which run (see below)
//   ORACLE_EFFORT=<x>        adds `model_reasoning_effort = "<x>"` to the CLI config (file suffix .effort-<x>)
//   ORACLE_SERVE_MODELS=1    the fake answers GET …/models with the CLI's own bundled list (not 404)
//   ORACLE_OUTPUT_SCHEMA=1   one `codex exec --output-schema` turn (file suffix .output-schema)
//   ORACLE_WS_MAX_MESSAGE_BYTES=<n>  the fake's upgrade answer announces `x-codex-websocket-max-message-bytes: <n>`
//                            and, like a real server, closes (1009) a connection that sends a larger frame
//                            (file suffix .ws-limit)
//   ORACLE_COMPRESS=gzip     the fake gzips the model list and the SSE answers when the request accepts
//                            gzip (file suffix .gzip; shows the CLI decodes both)
//   ORACLE_MODELS_PATCH=<json>  with ORACLE_SERVE_MODELS=1: the served list is the bundled one with these
//                            per-model changes, `{"<slug>": {"<field>": <value>, …}, …}` (null removes the
//                            field; a slug of `null` removes the model). Shows what the CLI does when the
//                            backend's list says something else than its bundled one. Needs ORACLE_LABEL
//   ORACLE_CONFIG=<toml>     more lines for the CLI's config.toml (e.g. `model_verbosity = "high"`); needs ORACLE_LABEL
//   ORACLE_LABEL=<name>      file suffix `.<name>` naming such a variant
//   ORACLE_OUT=<file>        where to write the capture (default: the fixture name)
//   ORACLE_NODE_MODULES=<dir> run the Codex CLI installed there instead of the pinned one
// scripts/check-codex-oracle.mjs (`npm run oracle:codex`) re-runs these and reports drift;
// `npm run oracle:codex -- --capture` writes every fixture again with the settings each was taken with.
//
// Plain JavaScript on purpose: it must run with nothing but node and the pinned CLI.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { WebSocketServer } from 'ws';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// The pinned CLI of oracles/package.json (node scripts/install-oracles.mjs installs it), or the one
// installed in ORACLE_NODE_MODULES (a node_modules folder; `npm run oracle:drift` passes the newest
// release's). The path rule is scripts/oracle/oracle-clis.ts's codexBinary, kept here in plain JS.
const nodeModules = process.env.ORACLE_NODE_MODULES ?? path.join(root, 'oracles/node_modules');
const codexPackage = JSON.parse(fs.readFileSync(path.join(nodeModules, '@openai/codex/package.json'), 'utf8'));
const codexBinary = path.join(
  nodeModules,
  `@openai/codex-${process.platform}-${process.arch}/vendor/${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}-unknown-linux-musl/bin/codex`,
);
const MODEL = process.env.ORACLE_MODEL ?? 'gpt-6.1-sol';
/** ORACLE_TRANSPORT=http captures the HTTP + SSE transport (the provider's supports_websockets off). */
const WEBSOCKETS = process.env.ORACLE_TRANSPORT !== 'http';
const EFFORT = process.env.ORACLE_EFFORT;
const SERVE_MODELS = process.env.ORACLE_SERVE_MODELS === '1';
/** ORACLE_OUTPUT_SCHEMA=1 captures one `codex exec --output-schema` turn (how the CLI asks for JSON output). */
const OUTPUT_SCHEMA = process.env.ORACLE_OUTPUT_SCHEMA === '1';
/** ORACLE_WS_MAX_MESSAGE_BYTES=<n>: the message size limit the fake announces and enforces. */
const WS_MAX_MESSAGE_BYTES = process.env.ORACLE_WS_MAX_MESSAGE_BYTES
  ? Number(process.env.ORACLE_WS_MAX_MESSAGE_BYTES)
  : undefined;
/** ORACLE_COMPRESS=gzip: answers compressed as a real server would for `accept-encoding: …gzip…`. */
const COMPRESS = process.env.ORACLE_COMPRESS === 'gzip';
const MODELS_PATCH = process.env.ORACLE_MODELS_PATCH ? JSON.parse(process.env.ORACLE_MODELS_PATCH) : undefined;
const EXTRA_CONFIG = process.env.ORACLE_CONFIG ? process.env.ORACLE_CONFIG.split('\n') : [];
const LABEL = process.env.ORACLE_LABEL;
if ((MODELS_PATCH || EXTRA_CONFIG.length > 0) && !LABEL) {
  process.stderr.write('ORACLE_MODELS_PATCH and ORACLE_CONFIG need ORACLE_LABEL (the capture is not the plain one)\n');
  process.exit(2);
}
if (MODELS_PATCH && !SERVE_MODELS) {
  process.stderr.write('ORACLE_MODELS_PATCH needs ORACLE_SERVE_MODELS=1 (the patched list is what the fake serves)\n');
  process.exit(2);
}
const fixtureDir = path.join(root, 'test/fixtures/codex-oracle');
const outFile =
  process.env.ORACLE_OUT ??
  path.join(
    fixtureDir,
    `codex-${codexPackage.version}.${MODEL}${WEBSOCKETS ? '' : '.http'}${process.env.ORACLE_APP_SERVER ? '.app-server' : ''}${OUTPUT_SCHEMA ? '.output-schema' : ''}${WS_MAX_MESSAGE_BYTES ? '.ws-limit' : ''}${COMPRESS ? '.gzip' : ''}${EFFORT ? `.effort-${EFFORT}` : ''}${SERVE_MODELS ? '.models-served' : ''}${LABEL ? `.${LABEL}` : ''}.capture.json`,
  );

const b64 = (value) => Buffer.from(JSON.stringify(value)).toString('base64url');
// The CLI refuses a JWT with an empty signature segment; the signature is never verified.
const jwt = (claims) =>
  `${b64({ alg: 'RS256', typ: 'JWT' })}.${b64(claims)}.${Buffer.from('not-a-signature').toString('base64url')}`;
const exp = Math.floor(Date.now() / 1000) + 3600;
const ACCOUNT = '11111111-2222-4333-8444-555555555555';
const authClaims = { chatgpt_account_id: ACCOUNT, chatgpt_plan_type: 'pro', chatgpt_user_id: 'user-oracle' };
const ACCESS = jwt({
  exp,
  'https://api.openai.com/auth': authClaims,
  'https://api.openai.com/profile': { email: 'oracle@example.test' },
});
const ID_TOKEN = jwt({ exp, email: 'oracle@example.test', 'https://api.openai.com/auth': authClaims });
const REFRESH = 'rt-oracle-secret';

/** Replaces every token value (and JWTs in general) so the fixture holds no credential. */
function redact(text) {
  return text
    .split(ACCESS)
    .join('<access_token>')
    .split(ID_TOKEN)
    .join('<id_token>')
    .split(REFRESH)
    .join('<refresh_token>')
    .replace(/eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g, '<jwt>');
}

/**
 * The CLI's own prompt and tool texts are OpenAI's prose, not ours to copy: keep only their
 * length (the comparison test checks names, presence and types, never texts).
 */
const PROSE_KEYS = new Set(['text', 'description', 'definition', 'instructions', 'output']);
function withoutProse(value, key) {
  if (typeof value === 'string') return PROSE_KEYS.has(key) && value.length > 0 ? `<${value.length} chars>` : value;
  if (Array.isArray(value)) return value.map((entry) => withoutProse(entry, key));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([name, entry]) => [name, withoutProse(entry, name)]));
  return value;
}

// The model list the pinned CLI ships with (`codex debug models --bundled`): served by the fake in
// ORACLE_SERVE_MODELS mode, and reduced below to the data the gateway's catalog follows.
const bundledList = await new Promise((resolve) => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'codex-oracle-bundled-'));
  const child = spawn(codexBinary, ['debug', 'models', '--bundled'], {
    env: { PATH: process.env.PATH, HOME: scratch, CODEX_HOME: scratch },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.on('close', () => {
    fs.rmSync(scratch, { recursive: true, force: true });
    resolve(JSON.parse(output));
  });
});

/** The list the fake serves: the bundled one, with ORACLE_MODELS_PATCH applied. */
function servedList() {
  if (!MODELS_PATCH) return bundledList;
  const models = [];
  for (const model of bundledList.models) {
    const patch = MODELS_PATCH[model.slug];
    if (patch === null) continue;
    const patched = { ...model };
    for (const [field, value] of Object.entries(patch ?? {})) {
      if (value === null) delete patched[field];
      else patched[field] = value;
    }
    models.push(patched);
  }
  return { ...bundledList, models };
}
const served = servedList();

const log = [];
let connectionCounter = 0;
let responseCounter = 0;

/** Frames for one response.create: a tool call on the first sampling request, then text. */
function reply(body) {
  const id = `resp_oracle_${++responseCounter}`;
  const created = { type: 'response.created', response: { id, model: MODEL, status: 'in_progress' } };
  const usage = {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 2,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 12,
  };
  const completed = (output) => ({
    type: 'response.completed',
    response: { id, model: MODEL, status: 'completed', output, usage },
  });
  if (body.generate === false) return [created, completed([])];
  const input = Array.isArray(body.input) ? body.input : [];
  const answered = input.some(
    (item) => item && (item.type === 'function_call_output' || item.type === 'custom_tool_call_output'),
  );
  const userTurns = input.filter((item) => item && item.type === 'message' && item.role === 'user').length;
  if (!answered && userTurns <= 2 && responseCounter <= 2) {
    const tools = Array.isArray(body.tools) ? body.tools : [];
    const names = tools.map((tool) => tool.name).filter(Boolean);
    const name =
      ['exec_command', 'shell_command', 'shell'].find((candidate) => names.includes(candidate)) ?? names[0] ?? 'shell';
    const args =
      name === 'exec_command'
        ? { cmd: 'echo oracle' }
        : name === 'shell'
          ? { command: ['echo', 'oracle'] }
          : name === 'shell_command'
            ? { command: 'echo oracle' }
            : {};
    const item = {
      id: 'fc_oracle_1',
      type: 'function_call',
      status: 'completed',
      call_id: 'call_oracle_1',
      name,
      arguments: JSON.stringify(args),
    };
    return [
      created,
      { type: 'response.output_item.added', output_index: 0, item: { ...item, arguments: '' } },
      { type: 'response.function_call_arguments.done', item_id: item.id, output_index: 0, arguments: item.arguments },
      { type: 'response.output_item.done', output_index: 0, item },
      completed([item]),
    ];
  }
  const message = {
    id: `msg_${id}`,
    type: 'message',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text: 'Done.', annotations: [] }],
  };
  return [
    created,
    { type: 'response.output_item.added', output_index: 0, item: { ...message, content: [] } },
    { type: 'response.output_text.delta', item_id: message.id, output_index: 0, content_index: 0, delta: 'Done.' },
    { type: 'response.output_item.done', output_index: 0, item: message },
    completed([message]),
  ];
}

const server = http.createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    const bytes = Buffer.concat(chunks);
    const raw = bytes.toString('utf8');
    let body;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = undefined;
    }
    const entry = {
      kind: 'http',
      method: request.method,
      url: request.url,
      headers: request.headers,
      body,
      bytes: bytes.length,
      at: Date.now(),
    };
    log.push(entry);
    const gzip = COMPRESS && /\bgzip\b/.test(request.headers['accept-encoding'] ?? '');
    const answer = (type, text) => {
      if (gzip) response.writeHead(200, { 'content-type': type, 'content-encoding': 'gzip' }).end(gzipSync(text));
      else response.writeHead(200, { 'content-type': type }).end(text);
      entry.answered_with = gzip ? 'gzip' : 'identity';
    };
    if (SERVE_MODELS && request.method === 'GET' && request.url.split('?')[0].endsWith('/models')) {
      answer('application/json', JSON.stringify(served));
      return;
    }
    if (request.method === 'POST' && request.url.split('?')[0].endsWith('/responses')) {
      const events = reply(body ?? {}).map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
      answer('text/event-stream', events.join(''));
      return;
    }
    response.writeHead(404, { 'content-type': 'application/json' }).end('{"detail":"not found"}');
  });
});
// With a limit, `ws` itself closes the connection with 1009 (message too big) on a larger frame.
const wss = new WebSocketServer({
  noServer: true,
  perMessageDeflate: false,
  ...(WS_MAX_MESSAGE_BYTES ? { maxPayload: WS_MAX_MESSAGE_BYTES } : {}),
});
if (WS_MAX_MESSAGE_BYTES)
  wss.on('headers', (headers) => headers.push(`x-codex-websocket-max-message-bytes: ${WS_MAX_MESSAGE_BYTES}`));
server.on('upgrade', (request, socket, head) => {
  const connection = ++connectionCounter;
  log.push({ kind: 'ws-handshake', connection, url: request.url, headers: request.headers, at: Date.now() });
  wss.handleUpgrade(request, socket, head, (ws) => {
    ws.on('error', () => undefined);
    ws.on('message', (data) => {
      let body;
      try {
        body = JSON.parse(data.toString('utf8'));
      } catch {
        body = undefined;
      }
      log.push({ kind: 'ws-message', connection, body, bytes: data.length, at: Date.now() });
      if (body && body.type === 'response.create') for (const event of reply(body)) ws.send(JSON.stringify(event));
    });
    ws.on('close', (code) => log.push({ kind: 'ws-close', connection, code, at: Date.now() }));
  });
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = server.address().port;

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'codex-oracle-'));
const codexHome = path.join(home, '.codex');
const workDir = path.join(home, 'work');
fs.mkdirSync(codexHome);
fs.mkdirSync(workDir);
fs.writeFileSync(
  path.join(codexHome, 'config.toml'),
  [
    `model = "${MODEL}"`,
    ...(EFFORT ? [`model_reasoning_effort = "${EFFORT}"`] : []),
    ...EXTRA_CONFIG,
    'model_provider = "oracle"',
    'check_for_update_on_startup = false',
    '[features]',
    'plugins = false',
    'remote_plugin = false',
    'apps = false',
    '[analytics]',
    'enabled = false',
    '[feedback]',
    'enabled = false',
    '[otel]',
    'exporter = "none"',
    'log_user_prompt = false',
    '[model_providers.oracle]',
    'name = "oracle"',
    `base_url = "http://127.0.0.1:${port}/backend-api/codex"`,
    'wire_api = "responses"',
    'requires_openai_auth = true',
    `supports_websockets = ${WEBSOCKETS}`,
    '',
  ].join('\n'),
);
fs.writeFileSync(
  path.join(codexHome, 'auth.json'),
  JSON.stringify(
    {
      auth_mode: 'chatgpt',
      OPENAI_API_KEY: null,
      tokens: { id_token: ID_TOKEN, access_token: ACCESS, refresh_token: REFRESH, account_id: ACCOUNT },
      last_refresh: new Date().toISOString(),
    },
    null,
    2,
  ),
  { mode: 0o600 },
);

// Every CLI run sees only this environment: its own homes, and proxies pointing at a closed port
// so that anything but the loopback fake fails at once.
const codexEnv = {
  PATH: process.env.PATH,
  HOME: home,
  CODEX_HOME: codexHome,
  HTTPS_PROXY: 'http://127.0.0.1:9',
  HTTP_PROXY: 'http://127.0.0.1:9',
  ALL_PROXY: 'http://127.0.0.1:9',
  NO_PROXY: '127.0.0.1,localhost',
  RUST_LOG: 'warn',
};

function runCodex(args) {
  return new Promise((resolve) => {
    const child = spawn(codexBinary, args, {
      cwd: workDir,
      env: codexEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/**
 * Two user turns in ONE process, through the CLI's app server (JSON-RPC lines on stdio):
 * initialize, thread/start, then turn/start twice, each awaited until turn/completed. This is what
 * shows whether the CLI keeps its WebSocket across user turns (`codex exec` runs one turn per process).
 */
function runAppServerTwoTurns() {
  return new Promise((resolve) => {
    const child = spawn(
      codexBinary,
      ['app-server', '-c', 'approval_policy="never"', '-c', 'sandbox_mode="read-only"'],
      {
        cwd: workDir,
        env: codexEnv,
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let output = '';
    let buffer = '';
    let nextId = 1;
    const waiting = new Map();
    let turnDone;
    const request = (method, params) =>
      new Promise((done) => {
        const id = nextId++;
        waiting.set(id, done);
        child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
      });
    child.stderr.on('data', (chunk) => (output += chunk));
    child.stdout.on('data', (chunk) => {
      buffer += chunk;
      for (let index = buffer.indexOf('\n'); index >= 0; index = buffer.indexOf('\n')) {
        const line = buffer.slice(0, index);
        buffer = buffer.slice(index + 1);
        let message;
        try {
          message = JSON.parse(line);
        } catch {
          continue;
        }
        if (message.id !== undefined && waiting.has(message.id)) {
          waiting.get(message.id)(message);
          waiting.delete(message.id);
        } else if (message.method === 'turn/completed' && turnDone) turnDone();
        else if (message.id !== undefined && message.method)
          child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { decision: 'denied' } }) + '\n');
      }
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
    const turn = async (threadId, text) => {
      const done = new Promise((settle) => (turnDone = settle));
      await request('turn/start', { threadId, input: [{ type: 'text', text }] });
      await done;
    };
    void (async () => {
      await request('initialize', { clientInfo: { name: 'oracle_capture', version: '1.0.0' } });
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'initialized' }) + '\n');
      const started = await request('thread/start', { model: MODEL, cwd: workDir });
      const threadId = started.result?.thread?.id ?? started.result?.threadId;
      log.push({ kind: 'app-server-thread', ok: typeof threadId === 'string', at: Date.now() });
      if (typeof threadId === 'string') {
        await turn(threadId, 'Run the shell command `echo oracle` once, then say Done.');
        log.push({ kind: 'app-server-turn-completed', turn: 1, at: Date.now() });
        await turn(threadId, 'Now just say Done again.');
        log.push({ kind: 'app-server-turn-completed', turn: 2, at: Date.now() });
      }
      child.stdin.end();
    })();
  });
}

const common = ['--skip-git-repo-check', '--sandbox', 'read-only', '-c', 'approval_policy="never"'];
let first;
let second;
if (OUTPUT_SCHEMA) {
  // A small strict schema of the kind `zodResponseFormat` produces; the CLI reads it from a file.
  const schema = {
    type: 'object',
    properties: { city: { type: 'string' }, population: { type: 'integer' } },
    required: ['city', 'population'],
    additionalProperties: false,
  };
  fs.writeFileSync(path.join(workDir, 'schema.json'), JSON.stringify(schema));
  first = await runCodex([
    'exec',
    ...common,
    '--output-schema',
    'schema.json',
    'Name the largest city of France and its population.',
  ]);
  second = { code: 0, output: '' };
  log.push({ kind: 'process-exit', run: 1, code: first.code, at: Date.now() });
} else if (process.env.ORACLE_APP_SERVER) {
  first = await runAppServerTwoTurns();
  second = { code: 0, output: '' };
  log.push({ kind: 'process-exit', run: 1, code: first.code, at: Date.now() });
} else {
  first = await runCodex(['exec', ...common, 'Run the shell command `echo oracle` once, then say Done.']);
  log.push({ kind: 'process-exit', run: 1, code: first.code, at: Date.now() });
  // An effort capture needs one user turn only (the effort is the same on every request).
  second = EFFORT
    ? { code: 0, output: '' }
    : await runCodex(['exec', ...common, 'resume', '--last', 'Now just say Done again.']);
  if (!EFFORT) log.push({ kind: 'process-exit', run: 2, code: second.code, at: Date.now() });
}
if (process.env.ORACLE_VERBOSE) process.stderr.write(`${first.output}\n----\n${second.output}\n`);

const t0 = log[0]?.at ?? 0;
const capture = {
  note: 'Captured from the real Codex CLI by scripts/capture-codex-oracle.mjs; tokens redacted. Do not edit by hand.',
  codex_version: codexPackage.version,
  model: MODEL,
  ...(MODELS_PATCH ? { models_patch: MODELS_PATCH } : {}),
  ...(EXTRA_CONFIG.length > 0 ? { config: EXTRA_CONFIG } : {}),
  transcript: log.map(({ at, ...entry }) => ({ ...entry, at_ms: at - t0 })),
  exit_codes: [first.code, second.code],
};
fs.mkdirSync(path.dirname(outFile), { recursive: true });
fs.writeFileSync(outFile, redact(JSON.stringify(withoutProse(capture), null, 2)) + '\n');
process.stdout.write(`${outFile}: ${log.length} entries, exit codes ${first.code}/${second.code}\n`);

const bundled = bundledList;
const models = bundled.models.map((model) => ({
  slug: model.slug,
  visibility: model.visibility,
  priority: model.priority,
  default_reasoning_level: model.default_reasoning_level,
  supported_reasoning_levels: model.supported_reasoning_levels.map((level) => level.effort),
  service_tiers: model.service_tiers.map((tier) => tier.id),
  input_modalities: model.input_modalities,
  default_verbosity: model.default_verbosity,
  use_responses_lite: model.use_responses_lite,
  context_window: model.context_window,
  max_context_window: model.max_context_window,
  // Per-model flags that decide what the CLI sends (reasoning.summary, text.verbosity, the
  // service tier) or whether it offers the model: kept by value so a release that flips one drifts.
  support_verbosity: model.support_verbosity,
  default_reasoning_summary: model.default_reasoning_summary,
  supports_reasoning_summary_parameter: model.supports_reasoning_summary_parameter,
  default_service_tier: model.default_service_tier,
  supported_in_api: model.supported_in_api,
  truncation_policy: model.truncation_policy,
}));
fs.writeFileSync(
  path.join(path.dirname(outFile), `codex-${codexPackage.version}.models.json`),
  JSON.stringify(
    {
      note: 'codex debug models --bundled of the pinned CLI, reduced by scripts/capture-codex-oracle.mjs',
      codex_version: codexPackage.version,
      models,
    },
    null,
    2,
  ) + '\n',
);
wss.close();
server.close();
fs.rmSync(home, { recursive: true, force: true });
