import * as fs from 'node:fs';
import { readFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { register } from 'prom-client';
import { METRICS } from './metric-declarations';
import type { CgroupFiles } from './process-metrics';
import {
  cgroupWorkingSet,
  containerMemoryBytes,
  effectiveMemoryLimitBytes,
  registerProcessMetrics,
} from './process-metrics';

// Wrap (not replace) readFile so a test can count which files a scrape reads.
jest.mock('node:fs/promises', () => {
  const actual = jest.requireActual<typeof import('node:fs/promises')>('node:fs/promises');
  return { ...actual, readFile: jest.fn(actual.readFile) };
});

/** How many times `file` was read since the spy was last cleared. */
const readsOf = (file: string) =>
  (readFile as jest.MockedFunction<typeof readFile>).mock.calls.filter(([name]) => name === file).length;

describe('effectiveMemoryLimitBytes', () => {
  const GiB = 1024 ** 3;

  it('is the container limit when one is set below the machine memory', () => {
    expect(effectiveMemoryLimitBytes(1 * GiB, 16 * GiB)).toBe(1 * GiB);
  });

  it('is the machine memory when the cgroup says "unlimited" (2^64), reports 0, or is larger', () => {
    expect(effectiveMemoryLimitBytes(2 ** 64, 16 * GiB)).toBe(16 * GiB);
    expect(effectiveMemoryLimitBytes(0, 16 * GiB)).toBe(16 * GiB);
    expect(effectiveMemoryLimitBytes(32 * GiB, 16 * GiB)).toBe(16 * GiB);
  });
});

describe('the cgroup memory the alert divides by the limit', () => {
  let root: string;
  let files: CgroupFiles;
  const MiB = 1024 ** 2;

  /** A cgroup tree under `root`: /proc/self/cgroup's text and the files of the process's cgroup. */
  function cgroup(membership: string, at: string, contents: Record<string, string>): void {
    fs.writeFileSync(files.membership, membership);
    const directory = path.join(files.mount, at);
    fs.mkdirSync(directory, { recursive: true });
    for (const [name, text] of Object.entries(contents)) fs.writeFileSync(path.join(directory, name), text);
  }

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'cgroup-'));
    files = { mount: path.join(root, 'sys-fs-cgroup'), membership: path.join(root, 'proc-self-cgroup') };
    fs.mkdirSync(files.mount);
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it("reads a container's own cgroup namespace (0::/): memory.current less inactive_file", async () => {
    cgroup('0::/\n', '/', {
      'memory.current': `${1400 * MiB}\n`,
      'memory.stat': `anon ${1200 * MiB}\nfile ${200 * MiB}\nactive_file ${50 * MiB}\ninactive_file ${150 * MiB}\n`,
    });
    expect(await cgroupWorkingSet(files)()).toBe(1250 * MiB);
  });

  it('follows the path /proc/self/cgroup names (a container without its own namespace)', async () => {
    cgroup('0::/kubepods/burstable/pod1/gateway\n', '/kubepods/burstable/pod1/gateway', {
      'memory.current': '1000\n',
      'memory.stat': 'inactive_file 300\n',
    });
    expect(await cgroupWorkingSet(files)()).toBe(700);
  });

  it('reads which cgroup once and its memory at each call', async () => {
    cgroup('0::/gateway\n', '/gateway', { 'memory.current': '1000\n', 'memory.stat': 'inactive_file 300\n' });
    (readFile as jest.MockedFunction<typeof readFile>).mockClear();
    const workingSet = cgroupWorkingSet(files);
    expect(readsOf(files.membership)).toBe(0);
    expect(await workingSet()).toBe(700);
    fs.writeFileSync(path.join(files.mount, 'gateway', 'memory.current'), '2000\n');
    expect(await workingSet()).toBe(1700);
    expect(readsOf(files.membership)).toBe(1);
    expect(readsOf(path.join(files.mount, 'gateway', 'memory.current'))).toBe(2);
  });

  it('is never below 0 when inactive_file outgrows memory.current between the two reads', async () => {
    cgroup('0::/\n', '/', { 'memory.current': '1000\n', 'memory.stat': 'inactive_file 1300\n' });
    expect(await cgroupWorkingSet(files)()).toBe(0);
  });

  it('is memory.current itself when memory.stat is missing', async () => {
    cgroup('0::/\n', '/', { 'memory.current': '4096\n' });
    expect(await cgroupWorkingSet(files)()).toBe(4096);
  });

  it('is undefined on cgroup v1 (no 0:: line), without memory.current (hybrid, host root), or without the files', async () => {
    cgroup('4:memory:/docker/abc\n1:cpu:/docker/abc\n', '/', { 'memory.current': '4096\n' });
    expect(await cgroupWorkingSet(files)()).toBeUndefined();
    cgroup('4:memory:/user.slice\n0::/\n', '/', {});
    fs.rmSync(path.join(files.mount, 'memory.current'), { force: true });
    expect(await cgroupWorkingSet(files)()).toBeUndefined();
    expect(await cgroupWorkingSet({ mount: '/nonexistent', membership: '/nonexistent/cgroup' })()).toBeUndefined();
  });

  it("falls back to the process's resident memory where there is no cgroup v2", async () => {
    const rss = process.memoryUsage.rss();
    const fallback = await containerMemoryBytes(
      cgroupWorkingSet({ mount: '/nonexistent', membership: '/nonexistent/cgroup' }),
    );
    expect(fallback).toBeGreaterThan(rss / 2);
    expect(fallback).toBeLessThan(rss * 2);
    cgroup('0::/\n', '/', { 'memory.current': `${3000 * MiB}\n` });
    expect(await containerMemoryBytes(cgroupWorkingSet(files))).toBe(3000 * MiB);
  });
});

describe(registerProcessMetrics.name, () => {
  afterAll(() => register.clear());

  it('reads which cgroup the process is in (/proc/self/cgroup) once, at the first scrape, not at each', async () => {
    (readFile as jest.MockedFunction<typeof readFile>).mockClear();
    registerProcessMetrics();
    expect(readsOf('/proc/self/cgroup')).toBe(0);
    const gauge = register.getSingleMetric(METRICS.containerMemory.name)!;
    await gauge.get();
    await gauge.get();
    expect(readsOf('/proc/self/cgroup')).toBe(1);
  });

  it("shows the container's memory limit where the process has one below the machine's memory", async () => {
    registerProcessMetrics();
    const limit = Math.floor(os.totalmem() / 2);
    const constrained = jest.spyOn(process, 'constrainedMemory').mockReturnValue(limit);
    try {
      const { values } = await register.getSingleMetric(METRICS.memoryLimit.name)!.get();
      expect(values.map(({ value }) => value)).toEqual([limit]);
    } finally {
      constrained.mockRestore();
    }
  });
});
