import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  keptInMemoryCost,
  readLoginDocument,
  refusedLoginFile,
  shellWord,
  tokenCheck,
  unreadableLoginFile,
  writeBackFailure,
} from './login-file-check';

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

describe(refusedLoginFile.name, () => {
  it('is the check of a file the system refuses, and nothing for content that is no login or no file', () => {
    const refusal = Object.assign(new Error('refused'), { code: 'EACCES' });
    expect(refusedLoginFile('/l/a.json', 'credentials file', refusal)).toMatchObject({
      state: 'unusable',
      reason: 'credentials file unreadable: EACCES',
      fix: expect.stringContaining('make /l/a.json readable by'),
    });
    // Not JSON: the file's own fix would be wrong, a new login mends it.
    expect(refusedLoginFile('/l/a.json', 'credentials file', new SyntaxError('bad'))).toBeUndefined();
    expect(
      refusedLoginFile('/l/a.json', 'credentials file', Object.assign(new Error('gone'), { code: 'ENOENT' })),
    ).toBeUndefined();
  });
});

describe(shellWord.name, () => {
  it('leaves a plain path as it is and quotes one a shell would split or expand', () => {
    expect(shellWord('/srv/logins/work-1')).toBe('/srv/logins/work-1');
    expect(shellWord('/srv/my logins')).toBe("'/srv/my logins'");
    expect(shellWord('/srv/$HOME')).toBe("'/srv/$HOME'");
    expect(shellWord("/srv/it's")).toBe("'/srv/it'\\''s'");
  });
});

describe(keptInMemoryCost.name, () => {
  it('says a rotated refresh token that stays in memory is lost at a restart, and a kept one is not', () => {
    expect(keptInMemoryCost(true, 'run `codex login`')).toBe(
      'the login works until the gateway restarts, then needs a new login (run `codex login`)',
    );
    expect(keptInMemoryCost(false, 'run `codex login`')).toBe(
      "the file's refresh token still works, so the login survives a restart",
    );
  });
});

describe(writeBackFailure.name, () => {
  it('says what a directory in the login file’s place is and how to mend the mount', () => {
    const error = Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    expect(writeBackFailure('/l/auth.json', error, 'COST', 'LOGIN').fix).toBe(
      'the refreshed token could not be written to /l/auth.json (EISDIR); COST; /l/auth.json is a directory, not a login file (a bind mount of a file missing on the host creates one): remove it, log in so the file exists, and point the setting or the mount at that file',
    );
  });
});

describe(tokenCheck.name, () => {
  it('carries the expiry the file names in every state, for the setup check to print', () => {
    expect(tokenCheck(false, true, 1_800_000_000_000)).toEqual({ state: 'usable', expiresAt: 1_800_000_000_000 });
    expect(tokenCheck(true, true, 1_700_000_000_000)).toEqual({
      state: 'expired_refreshable',
      expiresAt: 1_700_000_000_000,
    });
    expect(tokenCheck(true, false)).toEqual({ state: 'unusable', reason: 'expired, no refresh token' });
  });
});
