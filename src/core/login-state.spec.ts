import { loginStateMessage, noUsableLogin } from './login-state';

describe(loginStateMessage.name, () => {
  it("names the state's usual fix, or the check's own when its cause has another", () => {
    expect(loginStateMessage('provider_c', 'default', { state: 'missing' })).toContain('to fix: run `claude`');
    const check = {
      state: 'unusable' as const,
      reason: 'set to another backend',
      fix: 'unset CLAUDE_CODE_USE_BEDROCK',
    };
    expect(loginStateMessage('provider_c', 'default', check)).toBe(
      'provider_c login "default" (Claude Code CLI): unusable (set to another backend); to fix: unset CLAUDE_CODE_USE_BEDROCK',
    );
  });

  it("names the login's own command for a login its CLI does not keep by default", () => {
    expect(
      loginStateMessage('provider_a', 'a', { state: 'refresh_refused' }, 'run `CODEX_HOME=/x/a codex login`'),
    ).toBe('provider_a login "a" (Codex CLI): refresh refused; to fix: run `CODEX_HOME=/x/a codex login`');
  });

  it('names the file its check looked for when the login is missing, and only then', () => {
    const missing = { state: 'missing' as const, reason: 'no login file' };
    expect(loginStateMessage('provider_b', 'default', missing, undefined, '/h/.gemini/oauth_creds.json')).toBe(
      'provider_b login "default" (Gemini CLI): missing (no login file at /h/.gemini/oauth_creds.json); to fix: run `gemini` on the gateway\'s machine and choose "Login with Google"',
    );
    expect(loginStateMessage('provider_a', 'default', { state: 'usable' }, undefined, '/h/.codex/auth.json')).toBe(
      'provider_a login "default" (Codex CLI): usable',
    );
    // A login its CLI answers for (provider_c's own): no file was looked for.
    expect(
      loginStateMessage('provider_c', 'default', { state: 'missing', reason: 'claude auth status: not logged in' }),
    ).toMatch(
      /^provider_c login "default" \(Claude Code CLI\): missing \(claude auth status: not logged in\); to fix: /,
    );
  });
});

describe(noUsableLogin.name, () => {
  const unreadable = { state: 'unusable' as const, reason: 'login file unreadable: EACCES', fix: 'make /l readable' };
  const pooled = (alias: string) => ({
    alias,
    check: { state: 'refresh_refused' as const },
    loginCommand: `run \`CODEX_HOME=/x/${alias} codex login\``,
  });

  it("names the fix the logins' checks share", () => {
    expect(
      noUsableLogin('provider_a', [
        { alias: 'a', check: unreadable },
        { alias: 'b', check: unreadable },
      ]).fix,
    ).toBe('make /l readable');
    expect(noUsableLogin('provider_c', [{ alias: 'default', check: { state: 'cli_missing' } }]).fix).toContain(
      'npm install -g',
    );
  });

  it("names a login's own command, not the family's, when its file is not the CLI's default", () => {
    const { fix, message } = noUsableLogin('provider_a', [pooled('a')]);
    expect(fix).toBe('run `CODEX_HOME=/x/a codex login`');
    expect(message).toBe(
      'provider_a has no usable login, so its models answer errors; to fix: run `CODEX_HOME=/x/a codex login`',
    );
  });

  it('reads right whatever the fix is: a command, a sentence of its own, or one fix per login', () => {
    const directory = {
      state: 'unusable',
      reason: 'login file unreadable: EISDIR',
      fix: '/tmp/x is a directory, not a login file',
    } as const;
    expect(noUsableLogin('provider_a', [{ alias: 'a', check: directory }]).message).toBe(
      'provider_a has no usable login, so its models answer errors; to fix: /tmp/x is a directory, not a login file',
    );
    expect(noUsableLogin('provider_a', [pooled('a'), { alias: 'c', check: unreadable }]).message).toBe(
      'provider_a has no usable login, so its models answer errors; to fix one of them: login "a": run `CODEX_HOME=/x/a codex login`; login "c": make /l readable',
    );
  });

  it('names each login with its own fix when they differ', () => {
    expect(noUsableLogin('provider_a', [pooled('a'), pooled('b'), { alias: 'c', check: unreadable }]).fix).toBe(
      'fix one of them: login "a": run `CODEX_HOME=/x/a codex login`; login "b": run `CODEX_HOME=/x/b codex login`; login "c": make /l readable',
    );
    expect(
      noUsableLogin('provider_a', [
        { alias: 'c', check: unreadable },
        { alias: 'default', check: { state: 'missing' } },
      ]).fix,
    ).toContain('login "default": run `codex login`');
  });
});
