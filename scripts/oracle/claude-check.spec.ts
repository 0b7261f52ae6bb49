import * as fs from 'node:fs';
import * as path from 'node:path';
import { authStatusFacts, CLAUDE_FIXTURES, claudeVersionDifferences } from './claude-check';
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

  it('shows an auth status recorded by another version than the pinned one', () => {
    const pinned = pinnedVersion(CLAUDE_CODE);
    expect(claudeVersionDifferences('auth-status.json', { version: pinned }, pinned)).toEqual([]);
    expect(claudeVersionDifferences('auth-status.json', { ...read(), version: '2.1.300' }, pinned)).toEqual([
      expect.objectContaining({ where: 'auth-status.json', committed: ['2.1.300'], fresh: [pinned] }),
    ]);
  });
});

describe('the Claude Code stream-json fixtures', () => {
  const pinned = pinnedVersion(CLAUDE_CODE);
  const dir = path.dirname(file);
  const cases = fs.readdirSync(dir).filter((name) => name.endsWith('.jsonl'));

  it('were all printed by the pinned version', () => {
    for (const name of cases)
      expect(claudeVersionDifferences(name, fs.readFileSync(path.join(dir, name), 'utf8'), pinned)).toEqual([]);
  });

  it('shows a case printed by another version than the pinned one', () => {
    const text = fs
      .readFileSync(path.join(dir, 'text.jsonl'), 'utf8')
      .split(`"claude_code_version":"${pinned}"`)
      .join('"claude_code_version":"2.1.300"');
    expect(claudeVersionDifferences('text.jsonl', text, pinned)).toEqual([
      expect.objectContaining({ where: 'text.jsonl', change: 'changed', committed: ['2.1.300'], fresh: [pinned] }),
    ]);
  });
});
