import * as fs from 'node:fs';
import * as path from 'node:path';
import { authStatusFacts, CLAUDE_FIXTURES } from './claude-check';
import { CLAUDE_CODE, pinnedVersion } from './oracle-clis';
import { diffFacts } from './shape-diff';

// The `claude auth status --json` part of the Claude Code comparison (docs/providers.md,
// "Following the upstream CLIs"), on the fixture of the pinned version.
const file = path.join(CLAUDE_FIXTURES, `claude-code-${pinnedVersion(CLAUDE_CODE)}`, 'auth-status.json');
type AuthStatus = { version: string; cases: Record<string, { exit_code: number; stdout: Record<string, unknown> }> };
const read = (): AuthStatus => JSON.parse(fs.readFileSync(file, 'utf8')) as AuthStatus;

describe('the claude auth status comparison', () => {
  it('shows no drift when the fixture is compared with itself, whatever the version field says', () => {
    expect(diffFacts('auth', authStatusFacts(read()), authStatusFacts({ ...read(), version: '9.9.9' }))).toEqual([]);
  });

  it('shows a changed exit code and a new field by value', () => {
    const changed = read();
    const [name] = Object.keys(changed.cases);
    changed.cases[name].exit_code = 3;
    changed.cases[name].stdout.installedVersion = '9.9.9';
    expect(diffFacts('auth', authStatusFacts(read()), authStatusFacts(changed))).toEqual([
      expect.objectContaining({ change: 'changed', key: `auth ${name}.exit_code`, fresh: ['3'] }),
      expect.objectContaining({ change: 'added', key: `auth ${name}.stdout.installedVersion`, fresh: ['"9.9.9"'] }),
    ]);
  });
});
