import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readLoginDocument, unreadableLoginFile } from './login-file-check';

describe(unreadableLoginFile.name, () => {
  const uid = process.getuid?.();
  const user = uid === undefined ? "the gateway's user" : `the gateway's user (uid ${uid})`;
  const refusal = (code: string) => Object.assign(new Error('refused'), { code });

  it("names the errno and a fix about the file, not a new login, when the gateway's user may not read it", () => {
    for (const code of ['EACCES', 'EPERM'])
      expect(unreadableLoginFile('/logins/auth.json', 'login file', refusal(code))).toEqual({
        state: 'unusable',
        reason: `login file unreadable: ${code}`,
        fix: `make /logins/auth.json readable by ${user}: chown or chmod it (and let that user into its directories)`,
      });
  });

  it('says what a directory in the file’s place is, and names any other errno with a generic fix', () => {
    expect(unreadableLoginFile('/l/a.json', 'token file', refusal('EISDIR')).fix).toMatch(
      /^\/l\/a\.json is a directory, not a login file/,
    );
    expect(unreadableLoginFile('/l/a.json', 'login file', refusal('ELOOP'))).toEqual({
      state: 'unusable',
      reason: 'login file unreadable: ELOOP',
      fix: `make /l/a.json a login file that ${user} can read`,
    });
  });

  it('leaves content that is not a JSON object to the state’s own fix (a new login)', () => {
    expect(unreadableLoginFile('/l/a.json', 'login file', new SyntaxError('bad'))).toEqual({
      state: 'unusable',
      reason: 'login file not a JSON object',
    });
  });
});

describe(readLoginDocument.name, () => {
  it('reads a missing file as missing and a directory as unreadable (EISDIR, which root meets too)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'login-file-check-'));
    try {
      expect(await readLoginDocument(path.join(dir, 'none.json'))).toEqual({
        check: { state: 'missing', reason: 'no login file' },
      });
      expect(await readLoginDocument(dir)).toMatchObject({
        check: { state: 'unusable', reason: 'login file unreadable: EISDIR' },
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
