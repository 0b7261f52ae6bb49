import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { claudeCodeVersion, installedClaudeCodeVersion, parseClaudeVersion } from './provider-c.cli-version';

describe(parseClaudeVersion.name, () => {
  it('reads what `claude --version` prints', () => {
    expect(parseClaudeVersion('2.1.332 (Claude Code)\n')).toBe('2.1.332');
  });

  it('keeps a pre-release or build suffix', () => {
    expect(parseClaudeVersion('2.2.0-beta.3 (Claude Code)\n')).toBe('2.2.0-beta.3');
  });

  it('takes nothing from another program', () => {
    expect(parseClaudeVersion('v20.20.2\n')).toBeUndefined();
    expect(parseClaudeVersion('1.2.3 (some-other-cli)\n')).toBeUndefined();
    expect(parseClaudeVersion('')).toBeUndefined();
    expect(parseClaudeVersion('Usage: claude [options]')).toBeUndefined();
  });
});

describe(claudeCodeVersion.name, () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-cli-version-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** An executable that answers like `claude --version` and counts how often it was asked. */
  const fakeClaude = (answer: string): string => {
    const file = path.join(dir, 'claude');
    fs.writeFileSync(file, `#!/bin/sh\necho asked >> "${dir}/asked"\necho "${answer}"\n`, { mode: 0o755 });
    return file;
  };
  const timesAsked = () => fs.readFileSync(path.join(dir, 'asked'), 'utf8').split('\n').filter(Boolean).length;

  it('asks the executable once and keeps the answer where the error mapping reads it', async () => {
    const claude = fakeClaude('2.1.299 (Claude Code)');
    const env = { PATH: process.env.PATH ?? '' };
    const answers = await Promise.all([claudeCodeVersion(claude, env), claudeCodeVersion(claude, env)]);
    expect(answers).toEqual(['2.1.299', '2.1.299']);
    expect(await claudeCodeVersion(claude, env)).toBe('2.1.299');
    expect(timesAsked()).toBe(1);
    expect(installedClaudeCodeVersion()).toBe('2.1.299');
  });

  it('answers undefined for a program that is not Claude Code, keeping the last version known', async () => {
    const known = installedClaudeCodeVersion();
    expect(await claudeCodeVersion(fakeClaude('something else'), { PATH: process.env.PATH ?? '' })).toBeUndefined();
    expect(installedClaudeCodeVersion()).toBe(known);
  });
});
