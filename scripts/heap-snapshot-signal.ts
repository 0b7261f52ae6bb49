import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Signals a gateway started with `--heapsnapshot-signal=SIGUSR2` and resolves with the path of the
 * snapshot it writes into `directory`, once the file has stopped growing (V8 collects garbage
 * first, then streams the file). For the measuring scripts only; bounded by the caller.
 */
export async function heapSnapshotOf(pid: number, directory: string): Promise<string> {
  const before = new Set(fs.readdirSync(directory));
  process.kill(pid, 'SIGUSR2');
  for (let lastSize = -1; ;) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const file = fs.readdirSync(directory).find((name) => !before.has(name));
    if (!file) continue;
    const size = fs.statSync(path.join(directory, file)).size;
    if (size > 0 && size === lastSize) return path.join(directory, file);
    lastSize = size;
  }
}
