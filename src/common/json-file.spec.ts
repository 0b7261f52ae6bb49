import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileReadProblem, JsonFileProblem, readJsonFile } from './json-file';

describe(readJsonFile.name, () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'json-file-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** The message `readJsonFile(file)` throws (fails when it does not throw a JsonFileProblem). */
  function problemOf(file: string): string {
    try {
      readJsonFile(file);
    } catch (error) {
      expect(error).toBeInstanceOf(JsonFileProblem);
      return (error as Error).message;
    }
    throw new Error('expected a JsonFileProblem');
  }

  it('parses a JSON file', () => {
    fs.writeFileSync(path.join(dir, 'ok.json'), '{"models": []}');
    expect(readJsonFile(path.join(dir, 'ok.json'))).toEqual({ models: [] });
  });

  it('tells a missing file, a directory and text that is not JSON apart, with what the parser said', () => {
    expect(problemOf(path.join(dir, 'nope.json'))).toBe(
      'file not found: correct the path, or unset the setting for the built-in one',
    );
    expect(problemOf(dir)).toMatch(/^is a directory, not a file \(EISDIR\): point the setting at the JSON file/);
    fs.writeFileSync(path.join(dir, 'bad.json'), '{"models": [');
    expect(problemOf(path.join(dir, 'bad.json'))).toBe('not readable JSON: Unexpected end of JSON input');
  });
});

describe(fileReadProblem.name, () => {
  const failure = (code: string) => Object.assign(new Error(`${code}: at /secret/path`), { code });

  it("names the errno and the fix for a file the gateway's user may not read, never the message", () => {
    const uid = process.getuid?.();
    const user = uid === undefined ? "the gateway's user" : `the gateway's user (uid ${uid})`;
    for (const code of ['EACCES', 'EPERM'])
      expect(fileReadProblem(failure(code))).toBe(
        `not readable (${code}): make it readable by ${user} with chown or chmod, and let that user into its directories`,
      );
    expect(fileReadProblem(failure('ELOOP'))).toBe('not readable (ELOOP)');
    expect(fileReadProblem(new Error('no code'))).toBe('not readable');
  });
});
