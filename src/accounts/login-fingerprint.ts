import { statSync } from 'node:fs';

/**
 * What identifies the login file's current version on disk: inode, size and modification time.
 * `codex login` and the CLIs' own refreshes rewrite the file (often by rename, a new inode), so a
 * change in any of them means "someone logged in again". `undefined` when the file is missing.
 * The account pool's periodic sweep stats each login file, off the request path: a stat works on
 * every filesystem, including bind mounts where fs.watch misses a rename over the mount's source.
 */
export function loginFingerprint(file: string): string | undefined {
  try {
    const stats = statSync(file, { bigint: true });
    return `${stats.ino}:${stats.size}:${stats.mtimeNs}`;
  } catch {
    return undefined;
  }
}
