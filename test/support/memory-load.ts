import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ChildGateway } from './child-gateway';
import type { FakeFrame } from './fake-provider-a';
import { FakeProviderA } from './fake-provider-a';
import { FakeCodeAssist } from './fake-provider-b';
import { completed, created, providerASettings, textDelta } from './provider-a-fixtures';
import { providerBSettings } from './provider-b-fixtures';
import { answerRun, providerCSettings } from './provider-c-fixtures';
import { GOOD_OUTPUT, SCHEMA, STRUCTURED_PATH } from './structured-client';
import { samples, scrapeMetrics } from './prometheus-text';

/**
 * The load of docs/deployment.md "Memory budget", shared by test/memory-budget.e2e-spec.ts and
 * scripts/memory-budget.ts: the three families' fakes, a gateway's settings for them, the mixed
 * burst, held streams, paused readers, and the child's memory as Linux and V8 report it.
 */

export const MIB = 1024 * 1024;

/** The node flags the gateway is started with where node starts (`npm start`, the image's CMD). */
export const GATEWAY_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8'];

/** The user text that makes the provider_a fake answer with a large stream (paused-reader tests). */
const LARGE_MARKER = 'large-stream-please';
/** A large stream: this many deltas of DELTA_TEXT (4 MiB of text, more than loopback buffers hold). */
const LARGE_DELTAS = 4096;
const DELTA_TEXT = 'x'.repeat(1024);

export interface MemoryFakes {
  readonly a: FakeProviderA;
  readonly b: FakeCodeAssist;
  /** Settings that point a gateway at the three fakes, with structured inference on. */
  readonly settings: Record<string, string>;
  close(): Promise<void>;
}

/** Starts the provider_a and provider_b fakes and scripts the fake `claude` (provider_c). */
export async function startMemoryFakes(): Promise<MemoryFakes> {
  const a = await FakeProviderA.start();
  const b = await FakeCodeAssist.start();
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-memory-'));
  a.respondWith((body) => {
    const seen = JSON.stringify(body.input ?? '');
    if (seen.includes(LARGE_MARKER))
      return [created(), ...Array.from({ length: LARGE_DELTAS }, () => textDelta(DELTA_TEXT)), completed()];
    const text = body.model === 'gpt-6.1-terra' ? GOOD_OUTPUT : 'ok '.repeat(40);
    return [created(), textDelta(text), completed()] satisfies FakeFrame[];
  });
  const settings = {
    ...providerASettings(a, home),
    ...providerBSettings(b, home, { project: 'fake-project' }),
    ...providerCSettings(home, [answerRun(['Hello ', 'from ', 'the fake.'])]),
    GATEWAY_PROVIDERS: 'provider_a,provider_b,provider_c',
    STRUCTURED_INFERENCE_ENABLED: 'true',
    // A paused reader is the case under test, not a stream to give up on.
    GATEWAY_STREAM_IDLE_TIMEOUT: '0',
    NODE_ENV: 'production',
  };
  return {
    a,
    b,
    settings,
    close: async () => {
      await a.close();
      await b.close();
      fs.rmSync(home, { recursive: true, force: true });
    },
  };
}

/** One process's memory: Linux's view of the whole process and V8's of its heaps. */
export interface MemoryReading {
  /** Resident set (VmRSS) and its peak so far (VmHWM), bytes. */
  readonly rss: number;
  readonly peakRss: number;
  /** Anonymous resident memory (RssAnon): heaps, malloc arenas, buffers; no mapped code. */
  readonly anon: number;
  readonly heapUsed: number;
  readonly heapTotal: number;
  /** Memory outside V8's heap that V8 knows of (Buffers, ArrayBuffers). */
  readonly external: number;
  /** V8's heap spaces, committed bytes by space (`old`, `new`, `code`, `large_object`, …). */
  readonly spaces: Record<string, number>;
}

/** VmRSS, VmHWM and RssAnon of `pid` (bytes), from /proc: no work asked of the process itself. */
export function procMemory(pid: number): { rss: number; peakRss: number; anon: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: field('VmRSS'), peakRss: field('VmHWM'), anon: field('RssAnon') };
}

/** CPU seconds (user + system) `pid` has used so far, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the line, in clock ticks (100 per second on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Resident bytes of one process by where they sit, from /proc/<pid>/smaps. */
export interface ResidentBreakdown {
  /** glibc's main malloc arena (the `[heap]` of brk). */
  readonly mainArena: number;
  /** glibc's per-thread malloc arenas (anonymous mappings inside 64 MiB-aligned reservations). */
  readonly threadArenas: number;
  readonly arenaCount: number;
  /** Every other anonymous mapping: V8's heap pages, malloc's mmapped chunks, thread stacks. */
  readonly otherAnon: number;
  /** Mapped files: node's binary, shared libraries. */
  readonly files: number;
}

const ARENA_BYTES = 64 * MIB;

/**
 * Classifies `pid`'s resident memory. A glibc thread arena is a 64 MiB reservation aligned to its
 * size, whose used part is read-write and the rest `---p`: those mappings are counted as arenas.
 */
export function residentBreakdown(pid: number): ResidentBreakdown {
  const text = fs.readFileSync(`/proc/${pid}/smaps`, 'utf8');
  const mappings: { start: number; end: number; perms: string; name: string; rss: number }[] = [];
  for (const line of text.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      mappings.push({
        start: parseInt(head[1], 16),
        end: parseInt(head[2], 16),
        perms: head[3],
        name: head[4],
        rss: 0,
      });
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && mappings.length > 0) mappings[mappings.length - 1].rss = Number(rss[1]) * 1024;
  }
  let mainArena = 0;
  let threadArenas = 0;
  let arenaCount = 0;
  let otherAnon = 0;
  let files = 0;
  for (let index = 0; index < mappings.length; index++) {
    const mapping = mappings[index];
    if (mapping.name === '[heap]') mainArena += mapping.rss;
    else if (mapping.name !== '' && !mapping.name.startsWith('[anon')) files += mapping.rss;
    else {
      const next = mappings[index + 1];
      const reservationEnd =
        next && next.start === mapping.end && next.perms === '---p' && next.name === '' ? next.end : mapping.end;
      const isArena =
        mapping.perms === 'rw-p' && mapping.start % ARENA_BYTES === 0 && reservationEnd - mapping.start === ARENA_BYTES;
      if (isArena) {
        threadArenas += mapping.rss;
        arenaCount += 1;
      } else otherAnon += mapping.rss;
    }
  }
  return { mainArena, threadArenas, arenaCount, otherAnon, files };
}

/** `procMemory` plus V8's figures as the gateway's /metrics reports them (prom-client's gauges). */
export async function readMemory(gateway: ChildGateway): Promise<MemoryReading> {
  const text = await scrapeMetrics(gateway);
  const all = samples(text);
  const value = (name: string) => all.find((sample) => sample.name === `gateway_chat_api_${name}`)?.value ?? NaN;
  const spaces: Record<string, number> = {};
  for (const sample of all)
    if (sample.name === 'gateway_chat_api_nodejs_heap_space_size_total_bytes')
      spaces[sample.labels.space] = sample.value;
  return {
    ...procMemory(gateway.process.pid!),
    heapUsed: value('nodejs_heap_size_used_bytes'),
    heapTotal: value('nodejs_heap_size_total_bytes'),
    external: value('nodejs_external_memory_bytes'),
    spaces,
  };
}

/**
 * Waits until the process's RSS stops falling: three readings in a row, `intervalMs` apart, within
 * `toleranceBytes` of one another, or `boundMs` at most. Returns the last RSS. What is asserted is
 * the amount, never how long it took.
 */
export async function settledRss(
  pid: number,
  { intervalMs = 250, toleranceBytes = 2 * MIB, boundMs = 20_000 } = {},
): Promise<number> {
  const end = Date.now() + boundMs;
  const window: number[] = [];
  for (;;) {
    window.push(procMemory(pid).rss);
    if (window.length > 3) window.shift();
    if (window.length === 3 && Math.max(...window) - Math.min(...window) <= toleranceBytes) return window[2];
    if (Date.now() > end) return window[window.length - 1];
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

interface Exchange {
  readonly status: number;
  readonly bytes: number;
}

/** One request over `agent`, read to the end. */
function exchange(agent: http.Agent, url: string, route: string, body: string): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${url}${route}`, { method: 'POST', agent }, (response) => {
      let bytes = 0;
      response.on('data', (chunk: Buffer) => (bytes += chunk.length));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, bytes }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.setHeader('content-type', 'application/json');
    request.end(body);
  });
}

const CHAT = '/v1/chat/completions';
const history = (index: number, turns: number) =>
  Array.from({ length: turns }, (_, turn) => ({
    role: turn % 2 === 0 ? 'user' : 'assistant',
    content: `request ${index}, message ${turn}: ${'words of the conversation '.repeat(6)}`,
  }));

/**
 * Request `index` of the mixed burst: chat on the three families (streamed and not, with
 * histories of varied length), structured inference, and bad bodies (broken JSON, no messages, an
 * unknown model). provider_c, which starts a process per turn, is one request in `providerCEvery`.
 */
export function mixedRequest(index: number, providerCEvery: number): { route: string; body: string } {
  if (index % providerCEvery === providerCEvery - 1)
    return {
      route: CHAT,
      body: JSON.stringify({ model: 'sonnet', stream: index % 2 === 0, messages: history(index, 1) }),
    };
  const chat = (model: string, turns: number, stream: boolean) => ({
    route: CHAT,
    body: JSON.stringify({ model, stream, messages: history(index, turns) }),
  });
  switch (index % 10) {
    case 0:
    case 1:
      return chat('gpt-5.6-sol', 1 + (index % 7), index % 2 === 0);
    case 2:
      return chat('gpt-5.6-sol', 40, true);
    case 3:
    case 4:
      return chat('gemini-2.5-pro', 1 + (index % 5), index % 2 === 0);
    case 5:
      return chat('gemini-2.5-flash', 30, true);
    case 6:
      return {
        route: STRUCTURED_PATH,
        body: JSON.stringify({
          request_id: `burst-${index}`,
          model: 'gpt-6.1-terra',
          input: `Revenue grew 12% in quarter ${index}.`,
          schema: SCHEMA,
        }),
      };
    case 7:
      return { route: CHAT, body: '{"model": "gpt-5.6-sol", "messages": [' };
    case 8:
      return { route: CHAT, body: JSON.stringify({ model: 'gpt-5.6-sol', messages: [] }) };
    default:
      return chat('no-such-model-anywhere', 2, false);
  }
}

export interface BurstOptions {
  readonly requests: number;
  /** Requests in flight at once (one keep-alive connection each). */
  readonly concurrency: number;
  readonly providerCEvery: number;
  /** Index of the first request (request ids stay distinct across bursts). */
  readonly from?: number;
}

/** Sends the mixed burst; resolves with the count of answers by status. */
export async function mixedBurst(url: string, options: BurstOptions): Promise<Map<number, number>> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency });
  const statuses = new Map<number, number>();
  let next = options.from ?? 0;
  const last = next + options.requests;
  const worker = async () => {
    while (next < last) {
      const { route, body } = mixedRequest(next++, options.providerCEvery);
      const { status } = await exchange(agent, url, route, body);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency }, worker));
  } finally {
    agent.destroy();
  }
  return statuses;
}

/** A streamed chat the client keeps open; `close()` hangs up. */
export interface OpenStream {
  close(): void;
}

/**
 * Opens a streamed provider_a chat on its own connection and resolves once `bytes` of the answer
 * arrived (its first content chunk for a held stream). With `pause`, the client then stops reading:
 * the gateway's writes meet a full socket and it stops reading the upstream in turn.
 */
function openStream(url: string, index: number, content: string, pause: boolean): Promise<OpenStream> {
  const body = JSON.stringify({
    model: 'gpt-5.6-sol',
    stream: true,
    messages: [{ role: 'user', content }],
  });
  return new Promise((resolve, reject) => {
    const request = http.request(`${url}${CHAT}`, { method: 'POST', agent: false }, (response) => {
      if (response.statusCode !== 200) return reject(new Error(`stream ${index} answered ${response.statusCode}`));
      let seen = '';
      const onData = (chunk: Buffer) => {
        seen += chunk.toString('utf8');
        if (!seen.includes('"content":')) return;
        response.off('data', onData);
        if (pause) response.pause();
        else response.resume();
        resolve({ close: () => request.destroy() });
      };
      response.on('data', onData);
      response.on('error', () => undefined);
    });
    request.on('error', reject);
    request.setHeader('content-type', 'application/json');
    request.end(body);
  });
}

/**
 * Opens `count` streams (distinct chats) that stay open after their first delta: the fake holds
 * them. Run it with no other provider_a traffic in flight (it queues the fake's next answers).
 */
export function openHeldStreams(fake: FakeProviderA, url: string, count: number): Promise<OpenStream[]> {
  for (let index = 0; index < count; index++) fake.enqueue({ frames: [created(), textDelta('held')], holdOpen: true });
  return Promise.all(Array.from({ length: count }, (_, index) => openStream(url, index, `hold ${index}`, false)));
}

/** Opens `count` large streams whose clients stop reading after the first delta. */
export function openPausedReaders(url: string, count: number): Promise<OpenStream[]> {
  return Promise.all(
    Array.from({ length: count }, (_, index) => openStream(url, index, `${LARGE_MARKER} ${index}`, true)),
  );
}
