/**
 * Benchmark: latency, streaming throughput, concurrency and memory of the gateway, measured as a
 * real child process (`node dist/main.js`) against the provider_a fake upstream on loopback.
 * Run with `npm run bench` (builds first when dist/ is missing). Prints a markdown report; the
 * figures in docs/performance.md come from it. Bounded: every scenario has a fixed request count.
 */
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { FakeProviderA, FakeFrame, FakeScript } from '../test/support/fake-provider-a';
import { completed, created, providerASettings, textDelta } from '../test/support/provider-a-fixtures';

const ROOT = path.resolve(__dirname, '..');
const transport = (process.argv.find((arg) => arg.startsWith('--transport=')) ?? '--transport=ws').split('=')[1] as 'ws' | 'sse';

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

async function startGateway(fake: FakeProviderA, home: string): Promise<Gateway> {
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
  };
  const child = spawn(process.execPath, [path.join(ROOT, 'dist', 'main.js')], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString();
      for (const line of buffered.split('\n')) {
        if (line.includes('"gateway_listening"')) {
          child.stdout!.off('data', onData);
          // Keep draining the log pipe so the gateway never blocks on stdout.
          child.stdout!.resume();
          return resolve(JSON.parse(line).port as number);
        }
      }
    };
    child.stdout!.on('data', onData);
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

/** POSTs a chat request; resolves with time to first body byte and total time (ms). */
function chat(url: string, stream: boolean, readDelayMs = 0): Promise<{ ttfbMs: number; totalMs: number; bytes: number }> {
  const body = JSON.stringify({ model: 'gpt-5.6-sol', stream, messages: [{ role: 'user', content: 'benchmark' }] });
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = http.request(`${url}/v1/chat/completions`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (response) => {
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
    });
    request.on('error', reject);
    request.end(body);
  });
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};
const fixed = (value: number, digits = 1) => value.toFixed(digits);

async function main(): Promise<void> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-bench-'));
  const fake = await FakeProviderA.start();
  const gateway = await startGateway(fake, home);
  const rows: string[] = [];
  const report = (name: string, result: string) => {
    rows.push(`| ${name} | ${result} |`);
    process.stderr.write(`${name}: ${result}\n`);
  };
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
    report(`non-streaming, ${sequential} sequential requests`, `p50 ${fixed(percentile(latencies, 50))} ms, p95 ${fixed(percentile(latencies, 95))} ms, p99 ${fixed(percentile(latencies, 99))} ms`);

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
    report(`streaming, ${streams} × ${deltas} deltas`, `first byte p50 ${fixed(percentile(ttfb, 50))} ms; ${Math.round((streams * deltas) / chunkSeconds)} chunks/s per stream`);

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
    report(`concurrency, ${rounds} rounds × ${concurrent} streams × 200 deltas`, `${Math.round((concurrent * rounds) / (wall / 1000))} streams/s; peak RSS ${fixed(afterConcurrency.peakMiB)} MiB`);

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
    await fake.close();
    agent.destroy();
    fs.rmSync(home, { recursive: true, force: true });
  }
  process.stdout.write(
    [`Transport: provider_a over ${transport}; node ${process.versions.node}; ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'})`, '', '| scenario | result |', '|---|---|', ...rows, ''].join('\n'),
  );
}

main().catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(1);
});
