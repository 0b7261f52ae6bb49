// The module object itself, not a namespace copy: a spy on one of its functions is what the code calls.
import fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readJsonObject, writeBackRefreshed, writeJsonFileAtomic } from './credential-file';

describe(writeJsonFileAtomic.name, () => {
  let directory: string;
  beforeEach(() => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'credential-file-'));
  });
  afterEach(() => fs.rmSync(directory, { recursive: true, force: true }));

  it('replaces the file with 2-space JSON, mode 0600, and leaves no temp file', async () => {
    const file = path.join(directory, 'auth.json');
    fs.writeFileSync(file, '{"old":true}', { mode: 0o644 });
    await writeJsonFileAtomic(file, { a: 1, nested: { b: 'x' } });
    expect(fs.readFileSync(file, 'utf8')).toBe('{\n  "a": 1,\n  "nested": {\n    "b": "x"\n  }\n}\n');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(directory)).toEqual(['auth.json']);
  });

  it('reads back unknown fields unchanged', async () => {
    const file = path.join(directory, 'creds.json');
    fs.writeFileSync(file, JSON.stringify({ keep: [1, 2], token: 't' }));
    expect(await readJsonObject(file)).toEqual({ keep: [1, 2], token: 't' });
  });

  it('rejects a file that is not a JSON object', async () => {
    const file = path.join(directory, 'bad.json');
    fs.writeFileSync(file, '[1]');
    await expect(readJsonObject(file)).rejects.toThrow('not a JSON object');
  });
});

describe(writeBackRefreshed.name, () => {
  let directory: string;
  let file: string;
  beforeEach(() => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'credential-file-'));
    file = path.join(directory, 'auth.json');
    fs.writeFileSync(file, JSON.stringify({ refresh: 'spent', access: 'old', other: 1 }));
  });
  afterEach(() => {
    jest.restoreAllMocks();
    fs.rmSync(directory, { recursive: true, force: true });
  });

  const newLogin = { refresh: 'new-login', access: 'theirs' };
  const writeBack = () =>
    writeBackRefreshed(
      file,
      'spent',
      (document) => document.refresh,
      (document) => ({ ...document, refresh: 'rotated', access: 'renewed' }),
    );
  const stored = () => JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;

  /** Runs `land` once the write-back has checked the file and is writing its temporary file. */
  function landWhileWriting(land: () => void): void {
    const open = fs.promises.open;
    jest.spyOn(fs.promises, 'open').mockImplementation(async (where, ...rest) => {
      const handle = await open(where, ...rest);
      if (String(where).startsWith(`${file}.`)) {
        const sync = handle.sync.bind(handle);
        handle.sync = async () => {
          await sync();
          land();
        };
      }
      return handle;
    });
  }

  it('writes the refreshed login over the one it refreshed, other fields kept', async () => {
    expect(await writeBack()).toBe(true);
    expect(stored()).toEqual({ refresh: 'rotated', access: 'renewed', other: 1 });
    expect(fs.readdirSync(directory)).toEqual(['auth.json']);
  });

  it('leaves a file that holds another login alone', async () => {
    fs.writeFileSync(file, JSON.stringify(newLogin));
    expect(await writeBack()).toBe(false);
    expect(stored()).toEqual(newLogin);
  });

  it('leaves a new login alone that lands after the first check, before the rename', async () => {
    landWhileWriting(() => fs.writeFileSync(file, JSON.stringify(newLogin)));
    expect(await writeBack()).toBe(false);
    expect(stored()).toEqual(newLogin);
    expect(fs.readdirSync(directory)).toEqual(['auth.json']);
  });

  describe('on a bind-mounted single file (the rename is refused)', () => {
    const busy = (before: () => void = () => undefined, code = 'EBUSY') =>
      jest.spyOn(fs, 'renameSync').mockImplementation(() => {
        before();
        throw Object.assign(new Error(`${code}: rename refused`), { code, syscall: 'rename' });
      });

    // Each errno a rename onto a single bind-mounted file is refused with (docs/providers.md).
    it.each(['EBUSY', 'EXDEV', 'EPERM'])(
      'writes the file in place when the rename fails with %s, mode 0600, and leaves no temporary file',
      async (code) => {
        fs.chmodSync(file, 0o644);
        busy(undefined, code);
        expect(await writeBack()).toBe(true);
        expect(stored()).toEqual({ refresh: 'rotated', access: 'renewed', other: 1 });
        expect(fs.statSync(file).mode & 0o777).toBe(0o600);
        expect(fs.readdirSync(directory)).toEqual(['auth.json']);
      },
    );

    it('rejects any other failure of the rename and leaves the file as it was', async () => {
      busy(undefined, 'EACCES');
      await expect(writeBack()).rejects.toMatchObject({ code: 'EACCES' });
      expect(stored()).toEqual({ refresh: 'spent', access: 'old', other: 1 });
      expect(fs.readdirSync(directory)).toEqual(['auth.json']);
    });

    it('leaves a new login alone that lands before the in-place write', async () => {
      busy(() => fs.writeFileSync(file, JSON.stringify(newLogin)));
      expect(await writeBack()).toBe(false);
      expect(stored()).toEqual(newLogin);
      expect(fs.readdirSync(directory)).toEqual(['auth.json']);
    });
  });
});
