// The gateway's memory budget (docs/deployment.md "Memory budget"), measured: the gateway runs in
// its own process against the three families' fakes (test/support/memory-load.ts), with the node
// flags it is started with, and this prints its memory after each phase, as Linux (VmRSS, RssAnon,
// VmHWM) and V8 (/metrics: heap used and committed by space, external) see it:
//   idle → warm-up (the baseline) → a burst of mixed requests → settled → N held streams →
//   closed and settled → M paused readers → a burst beside them (the worst case) → all closed, settled.
// Run (with the Node release to measure first on PATH, or its full path instead of `node`):
//   node -r ./scripts/register-ts.cjs scripts/memory-budget.ts [--burst 5000] [--streams 1000]
//     [--readers 200] [--settle 20] [--built] [--env NAME=VALUE]… [--node-flag FLAG]… [--gc-at-end]
// `--built` runs `node dist/main.js` (after `npm run build`) as the image does; without it the
// gateway runs from source, as the e2e spec runs it. `--env` adds to the gateway's environment
// (MALLOC_ARENA_MAX=2), `--node-flag` to node's flags (the defaults are GATEWAY_NODE_FLAGS).
// `--gc-at-end` has the gateway write a heap snapshot at the end (which collects all garbage
// first) and reports once more: what is left then is live, or held by the allocator.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnGateway } from '../test/support/child-gateway';
import { heapSnapshotOf } from './heap-snapshot-signal';
import type { MemoryReading, ResidentBreakdown } from '../test/support/memory-load';
import {
  cpuSeconds,
  GATEWAY_NODE_FLAGS,
  MIB,
  mixedBurst,
  openHeldStreams,
  openPausedReaders,
  procMemory,
  readMemory,
  residentBreakdown,
  startMemoryFakes,
} from '../test/support/memory-load';

function options(argv: readonly string[]) {
  const result = {
    burst: 5000,
    streams: 1000,
    readers: 200,
    settle: 20,
    built: false,
    env: {} as Record<string, string>,
    snapshotDir: undefined as string | undefined,
  };
  const flags: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const name = argv[index];
    if (name === '--built') result.built = true;
    else if (name === '--env') {
      const [key, ...value] = argv[++index].split('=');
      result.env[key] = value.join('=');
    } else if (name === '--node-flag') flags.push(argv[++index]);
    else if (name === '--gc-at-end') result.snapshotDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-snapshot-'));
    else if (name === '--burst' || name === '--streams' || name === '--readers' || name === '--settle')
      result[name.slice(2) as 'burst' | 'streams' | 'readers' | 'settle'] = Number(argv[++index]);
    else throw new Error(`unknown argument ${name}`);
  }
  const nodeFlags = flags.length > 0 ? flags : [...GATEWAY_NODE_FLAGS];
  if (result.snapshotDir !== undefined)
    nodeFlags.push('--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${result.snapshotDir}`);
  return { ...result, nodeFlags };
}

const mib = (bytes: number) => (bytes / MIB).toFixed(1).padStart(7);

function row(phase: string, reading: MemoryReading, resident: ResidentBreakdown): string {
  const space = (name: string) => mib(reading.spaces[name] ?? 0);
  return [
    phase.padEnd(34),
    mib(reading.rss),
    mib(reading.anon),
    mib(reading.peakRss),
    mib(reading.heapUsed),
    mib(reading.heapTotal),
    space('old'),
    space('new'),
    space('large_object'),
    mib(reading.external),
    mib(resident.mainArena),
    `${mib(resident.threadArenas)} (${resident.arenaCount})`,
    mib(resident.otherAnon),
    mib(resident.files),
  ].join(' ');
}

async function main(): Promise<void> {
  const settings = options(process.argv.slice(2));
  const fakes = await startMemoryFakes();
  const gateway = await spawnGateway({ ...fakes.settings, ...settings.env }, [], undefined, {
    built: settings.built,
    nodeFlags: settings.nodeFlags,
  });
  const pid = gateway.process.pid!;
  const print = (line: string) => process.stdout.write(`${line}\n`);
  // V8 gives pages back after its memory reducer's GCs, which start about 8 s after the last
  // major GC once allocation is low: a settle reads RSS for `--settle` seconds and keeps the last.
  const settle = async () => {
    const start = procMemory(pid).rss;
    await new Promise((resolve) => setTimeout(resolve, settings.settle * 1000));
    print(`  settle: RSS ${mib(start)} -> ${mib(procMemory(pid).rss)} MiB in ${settings.settle} s`);
  };
  const report = async (phase: string) => {
    const reading = await readMemory(gateway);
    print(row(phase, reading, residentBreakdown(pid)));
    return reading;
  };
  try {
    print(
      `Node ${process.version}, node flags ${settings.nodeFlags.join(' ') || '(none)'}, env ${JSON.stringify(settings.env)}, ` +
        `${settings.built ? 'dist/main.js' : 'src/main.ts'}; MiB`,
    );
    print(
      `${'phase'.padEnd(34)}     rss    anon    peak heapUse heapTot     old     new   large  extern    brk  thread-arenas  other-anon  files`,
    );
    await settle();
    await report('idle');
    await mixedBurst(gateway.url, { requests: 500, concurrency: 20, providerCEvery: 25, from: 1_000_000 });
    await settle();
    const baseline = await report('after warm-up (baseline)');
    const cpuBefore = cpuSeconds(pid);
    const statuses = await mixedBurst(gateway.url, { requests: settings.burst, concurrency: 20, providerCEvery: 25 });
    print(`  gateway CPU for the burst: ${(cpuSeconds(pid) - cpuBefore).toFixed(2)} s`);
    await report(`right after ${settings.burst} mixed`);
    await settle();
    const settled = await report('settled');
    print(`  answers by status: ${JSON.stringify(Object.fromEntries(statuses))}`);
    print(`  retained over baseline: ${mib(settled.rss - baseline.rss)} MiB`);

    const held = await openHeldStreams(fakes.a, gateway.url, settings.streams);
    await settle();
    const withHeld = await report(`${settings.streams} held streams`);
    print(`  per held stream: ${((withHeld.rss - settled.rss) / settings.streams / 1024).toFixed(1)} KiB`);
    held.forEach((stream) => stream.close());
    await settle();
    const afterHeld = await report('held closed, settled');

    const readers = await openPausedReaders(gateway.url, settings.readers);
    await settle();
    const withReaders = await report(`${settings.readers} paused readers`);
    print(`  per paused reader: ${((withReaders.rss - afterHeld.rss) / settings.readers / 1024).toFixed(1)} KiB`);
    await mixedBurst(gateway.url, { requests: 1000, concurrency: 20, providerCEvery: 25, from: 2_000_000 });
    const worst = await report('readers + 1000 mixed');
    print(`  peak RSS so far (VmHWM): ${mib(worst.peakRss)} MiB`);
    readers.forEach((reader) => reader.close());
    await settle();
    const end = await report('readers closed, settled');
    print(`  retained over baseline: ${mib(end.rss - baseline.rss)} MiB`);
    if (settings.snapshotDir !== undefined) {
      // A heap snapshot collects all garbage first: what is still there after it is live.
      fs.rmSync(await heapSnapshotOf(pid, settings.snapshotDir));
      await settle();
      await report('after a full GC (heap snapshot)');
    }
  } finally {
    await gateway.close();
    await fakes.close();
  }
}

void main();
