import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readJsonObject, writeJsonFileAtomic } from './credential-file';

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
