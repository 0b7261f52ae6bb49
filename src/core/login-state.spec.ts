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
});

describe(noUsableLogin.name, () => {
  it("names the fix the logins' checks share, else the family's login command", () => {
    const unreadable = { state: 'unusable' as const, reason: 'login file unreadable: EACCES', fix: 'make /l readable' };
    expect(noUsableLogin('provider_a', [unreadable, unreadable]).fix).toBe('make /l readable');
    expect(noUsableLogin('provider_c', [{ state: 'cli_missing' }]).fix).toContain('npm install -g');
    expect(noUsableLogin('provider_a', [unreadable, { state: 'missing' }]).fix).toContain('`codex login`');
  });
});
