/**
 * Benchmark: latency, streaming throughput, concurrency and memory of the gateway, measured as a
 * real child process (`node dist/main.js`) against the provider_a fake upstream on loopback.
 * Run with `npm run bench` (builds first when dist/ is missing). Prints a markdown report; the
 * figures in docs/performance.md come from it. Bounded: every scenario has a fixed request count.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { FakeFrame, FakeScript } from '../test/support/fake-provider-a';
import { FakeProviderA } from '../test/support/fake-provider-a';
import {
  completed,
  created,
  functionCallItem,
  messageDone,
  providerASettings,
  textDelta,
} from '../test/support/provider-a-fixtures';

const ROOT = path.resolve(__dirname, '..');
const transport = (process.argv.find((arg) => arg.startsWith('--transport=')) ?? '--transport=ws').split('=')[1] as
  'ws' | 'sse';
/** `--agent-loop-only`: just the multi-turn agent loop (about 10 s). */
const agentLoopOnly = process.argv.includes('--agent-loop-only');

interface Gateway {
  child: ChildProcess;
  url: string;
  stop(): Promise<void>;
}

function streamScript(deltas: number, bytesPerDelta: number): FakeScript {
  const piece = 'x'.repeat(bytesPerDelta);
  const frames: FakeFrame[] = [created()];
  for (let index = 0; index < deltas; index++) frames.push(textDelta(piece));
  frames.push(completed());
  return { frames };
}

async function startGateway(
  fake: FakeProviderA,
  home: string,
  settings: Record<string, string> = {},
): Promise<Gateway> {
  if (!fs.existsSync(path.join(ROOT, 'dist', 'main.js'))) {
    const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('npm run build failed');
  }
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: home,
    GATEWAY_PORT: '0',
    GATEWAY_PROVIDERS: 'provider_a',
    PRIMARY_AGENT_QUEUE_ENABLED: 'false',
    LOG_LEVEL: 'info',
    ...providerASettings(fake, home, { transport }),
    ...settings,
  };
  const child = spawn(process.execPath, [path.join(ROOT, 'dist', 'main.js')], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString();
      for (const line of buffered.split('\n')) {
        if (line.includes('"gateway_listening"')) {
          child.stdout.off('data', onData);
          // Keep draining the log pipe so the gateway never blocks on stdout.
          child.stdout.resume();
          return resolve(JSON.parse(line).port as number);
        }
      }
    };
    child.stdout.on('data', onData);
    child.once('exit', (code) => reject(new Error(`gateway exited with ${code}`)));
  });
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** Resident and peak memory of a process, from /proc (Linux). */
function memoryOf(pid: number): { rssMiB: number; peakMiB: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rssMiB: kib('VmRSS') / 1024, peakMiB: kib('VmHWM') / 1024 };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

/** POSTs a JSON chat body on the shared keep-alive agent; `onResponse` reads the answer. */
function postChat(
  url: string,
  body: string,
  onResponse: (response: http.IncomingMessage) => void,
  onError: (error: Error) => void,
): void {
  const request = http.request(
    `${url}/v1/chat/completions`,
    {
      method: 'POST',
      agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    },
    onResponse,
  );
  request.on('error', onError);
  request.end(body);
}

/** POSTs a chat request; resolves with time to first body byte and total time (ms). */
function chat(
  url: string,
  stream: boolean,
  readDelayMs = 0,
): Promise<{ ttfbMs: number; totalMs: number; bytes: number }> {
  const body = JSON.stringify({ model: 'gpt-5.6-sol', stream, messages: [{ role: 'user', content: 'benchmark' }] });
  const started = performance.now();
  return new Promise((resolve, reject) => {
    postChat(
      url,
      body,
      (response) => {
        let first = 0;
        let bytes = 0;
        response.on('data', (chunk: Buffer) => {
          if (first === 0) first = performance.now();
          bytes += chunk.length;
          if (readDelayMs > 0) {
            // A slow reader: stop reading for a while after every chunk.
            response.pause();
            setTimeout(() => response.resume(), readDelayMs);
          }
        });
        response.on('end', () => {
          if (response.statusCode !== 200) return reject(new Error(`status ${response.statusCode}`));
          resolve({ ttfbMs: first - started, totalMs: performance.now() - started, bytes });
        });
        response.on('error', reject);
      },
      reject,
    );
  });
}

/** POSTs a non-streaming chat body; resolves with the answer's message and the time it took (ms). */
function chatJson(url: string, payload: unknown): Promise<{ message: Record<string, unknown>; totalMs: number }> {
  const body = JSON.stringify(payload);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    postChat(
      url,
      body,
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          if (response.statusCode !== 200) return reject(new Error(`status ${response.statusCode}`));
          const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
            choices: Array<{ message: Record<string, unknown> }>;
          };
          resolve({ message: parsed.choices[0].message, totalMs: performance.now() - started });
        });
        response.on('error', reject);
      },
      reject,
    );
  });
}

const AGENT_TURNS = 20;
const HANDSHAKE_MS = 50;

interface AgentTurn {
  readonly ms: number;
  /** Bytes of the `response.create` frames the gateway sent upstream for this turn. */
  readonly upstreamBytes: number;
}

/**
 * A coding agent's loop: a system prompt, 20 tools' worth of definitions, then 19 tool calls
 * whose ~6 KB results grow the history, and a final answer. Every new upstream connection
 * waits HANDSHAKE_MS (a TLS + WebSocket handshake across the internet). Run once with the
 * chat's connection kept between turns and once with PROVIDER_A_MAX_KEPT_SESSIONS=0.
 */
async function agentLoop(fake: FakeProviderA, home: string, reuse: boolean): Promise<AgentTurn[]> {
  const gateway = await startGateway(fake, home, reuse ? {} : { PROVIDER_A_MAX_KEPT_SESSIONS: '0' });
  fake.reset();
  fake.keepConnectionsOpen();
  fake.delayHandshakes(HANDSHAKE_MS);
  const tools = Array.from({ length: 20 }, (_, index) => ({
    type: 'function',
    function: {
      name: `tool_${index}`,
      description: `Tool ${index}: does one workspace action and returns its output.`,
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  }));
  const system = Array.from(
    { length: 40 },
    (_, index) => `Rule ${index}: read before you write, keep diffs small, run the tests.`,
  ).join('\n');
  const messages: unknown[] = [
    { role: 'system', content: system },
    { role: 'user', content: `Fix the failing test (${reuse ? 'reuse' : 'fresh'} run).` },
  ];
  const turns: AgentTurn[] = [];
  try {
    for (let turn = 1; turn <= AGENT_TURNS; turn++) {
      const id = `resp_${reuse ? 'r' : 'f'}_${turn}`;
      const last = turn === AGENT_TURNS;
      fake.enqueue({
        frames: last
          ? [created(id), textDelta('All tests pass.'), messageDone('All tests pass.'), completed(undefined, id)]
          : [
              created(id),
              ...functionCallItem(`call_${turn}`, 'tool_0', JSON.stringify({ path: `src/module${turn}.ts` })),
              completed(undefined, id),
            ],
      });
      const seen = fake.requests().length;
      const { message, totalMs } = await chatJson(gateway.url, { model: 'gpt-5.6-sol', messages, tools });
      const upstreamBytes = fake
        .requests()
        .slice(seen)
        .reduce((sum, request) => sum + Buffer.byteLength(request.raw), 0);
      turns.push({ ms: totalMs, upstreamBytes });
      if (last) break;
      const toolCalls = message.tool_calls as Array<{ id: string }>;
      const output = `// src/module${turn}.ts\n` + 'export const value = compute(input, { retries: 3 });\n'.repeat(110);
      messages.push(
        { role: 'assistant', content: message.content ?? null, tool_calls: toolCalls },
        { role: 'tool', tool_call_id: toolCalls[0].id, content: output },
      );
    }
  } finally {
    await gateway.stop();
    fake.reset();
  }
  return turns;
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};
const fixed = (value: number, digits = 1) => value.toFixed(digits);

/** The latency, streaming, concurrency and slow-client scenarios, on one gateway. */
async function gatewayScenarios(
  fake: FakeProviderA,
  home: string,
  report: (name: string, result: string) => void,
): Promise<void> {
  const gateway = await startGateway(fake, home);
  try {
    const idle = memoryOf(gateway.child.pid!);
    report('idle memory', `RSS ${fixed(idle.rssMiB)} MiB`);

    // Warm-up so JIT and connection setup do not count.
    for (let index = 0; index < 50; index++) fake.enqueue(streamScript(1, 2));
    for (let index = 0; index < 50; index++) await chat(gateway.url, false);

    const sequential = 300;
    for (let index = 0; index < sequential; index++) fake.enqueue(streamScript(1, 2));
    const latencies: number[] = [];
    for (let index = 0; index < sequential; index++) latencies.push((await chat(gateway.url, false)).totalMs);
    report(
      `non-streaming, ${sequential} sequential requests`,
      `p50 ${fixed(percentile(latencies, 50))} ms, p95 ${fixed(percentile(latencies, 95))} ms, p99 ${fixed(percentile(latencies, 99))} ms`,
    );

    const streams = 20;
    const deltas = 2000;
    for (let index = 0; index < streams; index++) fake.enqueue(streamScript(deltas, 16));
    const ttfb: number[] = [];
    let chunkSeconds = 0;
    for (let index = 0; index < streams; index++) {
      const result = await chat(gateway.url, true);
      ttfb.push(result.ttfbMs);
      chunkSeconds += result.totalMs / 1000;
    }
    report(
      `streaming, ${streams} × ${deltas} deltas`,
      `first byte p50 ${fixed(percentile(ttfb, 50))} ms; ${Math.round((streams * deltas) / chunkSeconds)} chunks/s per stream`,
    );

    const concurrent = 64;
    const rounds = 5;
    let wall = 0;
    for (let round = 0; round < rounds; round++) {
      for (let index = 0; index < concurrent; index++) fake.enqueue(streamScript(200, 16));
      const started = performance.now();
      await Promise.all(Array.from({ length: concurrent }, () => chat(gateway.url, true)));
      wall += performance.now() - started;
    }
    const afterConcurrency = memoryOf(gateway.child.pid!);
    report(
      `concurrency, ${rounds} rounds × ${concurrent} streams × 200 deltas`,
      `${Math.round((concurrent * rounds) / (wall / 1000))} streams/s; peak RSS ${fixed(afterConcurrency.peakMiB)} MiB`,
    );

    // Backpressure: 40 MiB through a client that reads slowly; the gateway must not buffer it.
    const bigDeltas = 40_000;
    fake.enqueue(streamScript(bigDeltas, 1024));
    const before = memoryOf(gateway.child.pid!).rssMiB;
    let maxDuring = before;
    const sampler = setInterval(() => (maxDuring = Math.max(maxDuring, memoryOf(gateway.child.pid!).rssMiB)), 50);
    const slow = await chat(gateway.url, true, 2);
    clearInterval(sampler);
    report(
      `slow client, ${fixed(slow.bytes / 1048576)} MiB streamed`,
      `gateway RSS ${fixed(before)} → max ${fixed(maxDuring)} MiB (+${fixed(maxDuring - before)} MiB) over ${fixed(slow.totalMs / 1000)} s`,
    );
  } finally {
    await gateway.stop();
  }
}

async function main(): Promise<void> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-bench-'));
  const fake = await FakeProviderA.start();
  const rows: string[] = [];
  const report = (name: string, result: string) => {
    rows.push(`| ${name} | ${result} |`);
    process.stderr.write(`${name}: ${result}\n`);
  };
  const loopRows: string[] = [];
  try {
    if (!agentLoopOnly) await gatewayScenarios(fake, home, report);
    if (transport === 'ws') {
      const kept = await agentLoop(fake, home, true);
      const fresh = await agentLoop(fake, home, false);
      const total = (turns: AgentTurn[]) => turns.reduce((sum, turn) => sum + turn.ms, 0);
      const bytes = (turns: AgentTurn[]) => turns.reduce((sum, turn) => sum + turn.upstreamBytes, 0);
      report(
        `agent loop, ${AGENT_TURNS} turns, ${HANDSHAKE_MS} ms handshake`,
        `session reuse: ${fixed(total(kept))} ms end to end, ${fixed(bytes(kept) / 1024)} KiB upstream; a connection per turn: ${fixed(total(fresh))} ms, ${fixed(bytes(fresh) / 1024)} KiB`,
      );
      loopRows.push(
        '',
        `Agent loop per turn (${HANDSHAKE_MS} ms upstream handshake):`,
        '',
        '| turn | reuse: ms | reuse: bytes upstream | connection per turn: ms | connection per turn: bytes upstream |',
        '|---|---|---|---|---|',
      );
      kept.forEach((turn, index) =>
        loopRows.push(
          `| ${index + 1} | ${fixed(turn.ms)} | ${turn.upstreamBytes} | ${fixed(fresh[index].ms)} | ${fresh[index].upstreamBytes} |`,
        ),
      );
    }
  } finally {
    await fake.close();
    agent.destroy();
    fs.rmSync(home, { recursive: true, force: true });
  }
  process.stdout.write(
    [
      `Transport: provider_a over ${transport}; node ${process.versions.node}; ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'})`,
      '',
      '| scenario | result |',
      '|---|---|',
      ...rows,
      ...loopRows,
      '',
    ].join('\n'),
  );
}

main().catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(1);
});
