import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import type { ChildGateway } from './support/child-gateway';
import { REPO_ROOT, spawnGateway } from './support/child-gateway';
import type { MemoryFakes } from './support/memory-load';
import {
  GATEWAY_NODE_FLAGS,
  MIB,
  mixedBurst,
  openPausedReaders,
  procMemory,
  settledRss,
  startMemoryFakes,
} from './support/memory-load';

/** How far above its post-warm-up baseline RSS may stay once a burst is over (docs/deployment.md "Memory budget"). */
const RETAINED_BOUND = 64 * MIB;
/** The share of the manifest's memory limit the worst documented case may reach. */
const WORST_CASE_SHARE = 0.75;
const PAUSED_READERS = 200;
/**
 * Hang guard per test: each takes 15–50 s beside another CPU-heavy job on 2 CPUs, and up to 110 s
 * when two copies of this spec run side by side; never a speed requirement.
 */
const GUARD_MS = 240_000;

/** `resources.limits.memory` of the gateway container in the base manifest, in bytes. */
function manifestLimit(): number {
  const documents = fs
    .readFileSync(path.join(REPO_ROOT, 'docker', 'k8s', 'base', 'deployment.yaml'), 'utf8')
    .split(/^---$/m)
    .map((text) => parse(text) as { kind?: string; spec?: any });
  const deployment = documents.find((document) => document?.kind === 'Deployment');
  const container = deployment?.spec.template.spec.containers.find((entry: any) => entry.name === 'gateway');
  const limit = /^(\d+)(Mi|Gi)$/.exec(String(container?.resources?.limits?.memory));
  if (!limit) throw new Error(`no memory limit in the base deployment: ${container?.resources?.limits?.memory}`);
  return Number(limit[1]) * (limit[2] === 'Gi' ? 1024 : 1) * MIB;
}

/** The image's `ENV MALLOC_ARENA_MAX=…` (docker/Dockerfile, runtime stage): the allocator setting the gateway runs with. */
function imageArenaMax(): string {
  const dockerfile = fs.readFileSync(path.join(REPO_ROOT, 'docker', 'Dockerfile'), 'utf8');
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  const setting = /^ENV\b.*\bMALLOC_ARENA_MAX=(\d+)/m.exec(runtime);
  if (!setting) throw new Error('the runtime stage of docker/Dockerfile sets no MALLOC_ARENA_MAX');
  return setting[1];
}

/**
 * The memory budget (docs/deployment.md "Memory budget") held by a real child gateway against the
 * three families' fakes, started as the image starts it (its node flags and allocator setting):
 * after a burst of mixed requests RSS comes back to within 64 MiB of its post-warm-up baseline, and
 * the worst documented case, 200 clients that stopped reading large streams plus a burst beside
 * them, peaks under 75 % of the manifest's memory limit. Memory amounts are asserted, never times:
 * the settle polls RSS until it stops moving (bounded), and a busy machine only makes it slower.
 */
describe('the memory budget (child process)', () => {
  let fakes: MemoryFakes;
  let gateway: ChildGateway;

  beforeAll(async () => {
    fakes = await startMemoryFakes();
    gateway = await spawnGateway({ ...fakes.settings, MALLOC_ARENA_MAX: imageArenaMax() }, [], undefined, {
      nodeFlags: GATEWAY_NODE_FLAGS,
    });
  }, GUARD_MS);

  afterAll(async () => {
    await gateway?.close();
    await fakes?.close();
  });

  it(
    'comes back to within 64 MiB of its post-warm-up baseline after a burst of mixed requests',
    async () => {
      const pid = gateway.process.pid!;
      await mixedBurst(gateway.url, { requests: 300, concurrency: 20, providerCEvery: 25, from: 1_000_000 });
      const baseline = await settledRss(pid);
      const statuses = await mixedBurst(gateway.url, { requests: 2000, concurrency: 20, providerCEvery: 25 });
      // The burst is what it says: chats and structured answers, and the bad bodies refused.
      expect(statuses.get(200)).toBeGreaterThan(1000);
      expect(statuses.get(400)).toBeGreaterThan(0);
      const settled = await settledRss(pid);
      expect((settled - baseline) / MIB).toBeLessThanOrEqual(RETAINED_BOUND / MIB);
    },
    GUARD_MS,
  );

  it(
    'keeps 200 paused readers of large streams plus a burst under 75 % of the manifest limit',
    async () => {
      const limit = manifestLimit();
      const readers = await openPausedReaders(gateway.url, PAUSED_READERS);
      try {
        await mixedBurst(gateway.url, { requests: 500, concurrency: 20, providerCEvery: 25, from: 2_000_000 });
        await settledRss(gateway.process.pid!);
        // VmHWM: the highest RSS of the process's whole life, the peaks of both tests included.
        const peak = procMemory(gateway.process.pid!).peakRss;
        expect(peak / MIB).toBeLessThan((limit * WORST_CASE_SHARE) / MIB);
      } finally {
        readers.forEach((reader) => reader.close());
      }
    },
    GUARD_MS,
  );
});
