import { readFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { collectDefaultMetrics, Gauge, register } from 'prom-client';
import { METRIC_PREFIX, METRICS } from './metric-declarations';

/**
 * cgroup v1 reports "no limit" as a huge page-aligned number and Node returns 2^64 (or 0) for
 * it; anything at or above the machine's memory is no real limit either.
 */
export function effectiveMemoryLimitBytes(constrained: number, total: number): number {
  return constrained > 0 && constrained < total ? constrained : total;
}

/** Where the kernel shows the cgroup v2 tree, and the file naming this process's place in it. */
export interface CgroupFiles {
  readonly mount: string;
  readonly membership: string;
}

const CGROUP_V2: CgroupFiles = { mount: '/sys/fs/cgroup', membership: '/proc/self/cgroup' };

/**
 * A reader of the working set of the cgroup (v2) this process runs in: `memory.current`
 * (everything charged to it: the gateway, every child it spawned such as provider_c's `claude`,
 * their page cache) less the inactive file cache of `memory.stat`, which the kernel drops before it
 * kills anything. The kubelet and cAdvisor count a container's memory the same way. Both files are
 * read at each call; which cgroup that is (`/proc/self/cgroup`) only at the first, as a container's
 * process stays in the cgroup it started in. Undefined where there is no cgroup v2 memory
 * controller for the process (cgroup v1, the root cgroup of a host). Making the reader reads nothing.
 */
export function cgroupWorkingSet(files: CgroupFiles = CGROUP_V2): () => Promise<number | undefined> {
  let directory: Promise<string | undefined> | undefined;
  return async () => {
    directory ??= cgroupDirectory(files);
    const at = await directory;
    if (at === undefined) return undefined;
    const current = Number.parseInt(await readFile(path.join(at, 'memory.current'), 'utf8').catch(() => ''), 10);
    if (!Number.isFinite(current)) return undefined;
    const stat = await readFile(path.join(at, 'memory.stat'), 'utf8').catch(() => '');
    const inactiveFile = Number(/^inactive_file (\d+)$/m.exec(stat)?.[1] ?? 0);
    return Math.max(0, current - inactiveFile);
  };
}

/** The directory of the process's cgroup v2 under the mount, undefined without a v2 entry. */
async function cgroupDirectory(files: CgroupFiles): Promise<string | undefined> {
  const membership = await readFile(files.membership, 'utf8').catch(() => '');
  // A v2 entry is `0::<path>`; inside a container's own cgroup namespace the path is `/`.
  const relative = /^0::(\/.*)$/m.exec(membership)?.[1];
  return relative === undefined ? undefined : path.join(files.mount, relative);
}

/** What the memory alert divides by the limit: the cgroup's working set, else the process's own RSS. */
export async function containerMemoryBytes(workingSet: () => Promise<number | undefined>): Promise<number> {
  return (await workingSet()) ?? process.memoryUsage.rss();
}

/**
 * prom-client's default Node metrics (process CPU and memory, event-loop lag, GC, heap, handles)
 * under the gateway's own prefix, so every series of the gateway starts with `gateway_chat_api_`
 * (docs/endpoints.md "Process metrics"), plus the memory limit the process runs under and the
 * memory charged against it (its children's included), which the memory alert divides. Both are
 * read at each scrape (which cgroup the process is in, once: `cgroupWorkingSet`). Registered once
 * per process on the shared registry: Jest boots several gateways in one process and a second
 * registration would throw.
 */
export function registerProcessMetrics(): void {
  if (register.getSingleMetric(METRICS.memoryLimit.name)) return;
  collectDefaultMetrics({ prefix: METRIC_PREFIX });
  new Gauge({
    name: METRICS.memoryLimit.name,
    help: METRICS.memoryLimit.help,
    collect() {
      this.set(effectiveMemoryLimitBytes(process.constrainedMemory?.() ?? 0, os.totalmem()));
    },
  });
  const workingSet = cgroupWorkingSet();
  new Gauge({
    name: METRICS.containerMemory.name,
    help: METRICS.containerMemory.help,
    // Runs at each scrape, never while the module is built (a function prom-client calls later).
    collect: async function (this: Gauge) {
      this.set(await containerMemoryBytes(workingSet));
    },
  });
}
