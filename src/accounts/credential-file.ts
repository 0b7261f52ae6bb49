import { randomBytes } from 'node:crypto';
import { promises as fs, readFileSync, renameSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

/** A CLI login file's text as a generic JSON object (unknown fields survive a rewrite). */
function jsonObjectOf(text: string): Record<string, unknown> {
  const parsed: unknown = JSON.parse(text);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error('login file is not a JSON object');
  return parsed as Record<string, unknown>;
}

/** Reads a CLI login file as a generic JSON object (unknown fields survive a rewrite). */
export async function readJsonObject(filePath: string): Promise<Record<string, unknown>> {
  return jsonObjectOf(await fs.readFile(filePath, 'utf8'));
}

/**
 * Atomic write-back of a CLI login file (docs/upstream/provider-a.md §1.6, docs/upstream/provider-b.md §2.4): 2-space JSON
 * with a trailing newline into `<file>.<pid>.<random>.tmp` beside it with mode 0600, fsync,
 * rename over the original, chmod 0600. When rename fails because the file is a single
 * bind-mounted file (EBUSY, EXDEV, EPERM), fall back to truncate-and-write in place.
 *
 * `stillCurrent` is asked right before the file is replaced (the rename, and again before an
 * in-place write); when it answers false the file is left as it is, the temporary file removed,
 * and the answer is `false`. The question and the replacement are synchronous calls one after the
 * other, so nothing else in this process runs between them (a write-back is one small file, once
 * per token life).
 */
export async function writeJsonFileAtomic(
  filePath: string,
  value: unknown,
  stillCurrent: () => boolean = () => true,
): Promise<boolean> {
  const text = JSON.stringify(value, null, 2) + '\n';
  const temporary = path.join(
    path.dirname(filePath),
    `${path.basename(filePath)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`,
  );
  const handle = await fs.open(temporary, 'w', 0o600);
  try {
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  let current: boolean;
  try {
    current = stillCurrent();
  } catch (error) {
    await fs.rm(temporary, { force: true });
    throw error;
  }
  if (!current) {
    await fs.rm(temporary, { force: true });
    return false;
  }
  try {
    renameSync(temporary, filePath);
  } catch (error) {
    await fs.rm(temporary, { force: true });
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EBUSY' && code !== 'EXDEV' && code !== 'EPERM') throw error;
    if (!stillCurrent()) return false;
    writeFileSync(filePath, text, { encoding: 'utf8', mode: 0o600 });
    await fs.chmod(filePath, 0o600).catch(() => undefined);
    return true;
  }
  await fs.chmod(filePath, 0o600);
  return true;
}

/**
 * The write-back of a refreshed login (docs/upstream/provider-a.md §1.6,
 * docs/upstream/provider-b.md §2.4): the file as it is now, changed by `update` and written
 * atomically, but only while it still holds `spent`, the refresh token the refresh used
 * (`refreshTokenIn` finds it in the family's file). A file holding another one was written meanwhile (a new CLI login, or the CLI's own
 * refresh): writing the old login's tokens over it would lose that login, so it is left as it is
 * and the answer is `false`. The file is read again right before it is replaced, so a login that
 * lands while the new file is being written is kept too. A file that cannot be read or written
 * rejects.
 */
export async function writeBackRefreshed(
  filePath: string,
  spent: string,
  refreshTokenIn: (document: Record<string, unknown>) => unknown,
  update: (document: Record<string, unknown>) => Record<string, unknown>,
): Promise<boolean> {
  const current = await readJsonObject(filePath);
  if (refreshTokenIn(current) !== spent) return false;
  return writeJsonFileAtomic(
    filePath,
    update(current),
    () => refreshTokenIn(jsonObjectOf(readFileSync(filePath, 'utf8'))) === spent,
  );
}
