import * as fs from 'node:fs';
import * as path from 'node:path';
import type { CodexCapture } from './codex-check';
import { CODEX_FIXTURES, codexRequests } from './codex-check';
import type { CliDrift } from './drift-report';
import { driftExitCode, EXIT_COULD_NOT_RUN, EXIT_DRIFT, EXIT_NO_DRIFT, formatDrift } from './drift-report';
import { CODEX, pinnedVersion } from './oracle-clis';
import { diffRecorded } from './shape-diff';

// The report `npm run oracle:drift` prints (docs/providers.md, "Following the upstream CLIs").
const version = pinnedVersion(CODEX);
const name = `codex-${version}.gpt-5.5.http.capture.json`;
const capture = JSON.parse(fs.readFileSync(path.join(CODEX_FIXTURES, name), 'utf8')) as CodexCapture;

/** The capture as a newer CLI would send it: one more header, which no pinned capture has, on every POST. */
function withHeaderOnPosts(): CodexCapture {
  const copy = JSON.parse(JSON.stringify(capture)) as {
    transcript: { kind: string; method?: string; headers?: object }[];
  };
  for (const entry of copy.transcript)
    if (entry.method === 'POST') entry.headers = { ...entry.headers, 'x-codex-next-feature': 'on' };
  return copy as CodexCapture;
}

describe('the drift report', () => {
  const posts = codexRequests(capture).filter((request) => request.identity.startsWith('http POST')).length;
  const differences = diffRecorded(name, codexRequests(capture), codexRequests(withHeaderOnPosts()));

  it('prints one line per distinct change, then where it was seen', () => {
    const report = formatDrift([{ cli: CODEX, pinned: version, newest: '9.9.9', differences }]);
    const where = Array.from({ length: posts }, (_, index) => `http POST /backend-api/codex/responses #${index + 1}`);
    expect(report).toBe(
      [
        `${CODEX}: pinned ${version}, newest 9.9.9: 1 difference(s), seen ${posts} time(s)`,
        '  + header x-codex-next-feature: on',
        `      in ${name}: ${where.join('; ')}`,
        'drift: re-pin and re-capture as docs/providers.md ("Following the upstream CLIs") says',
        '',
      ].join('\n'),
    );
    expect(driftExitCode([{ cli: CODEX, pinned: version, newest: '9.9.9', differences }])).toBe(EXIT_DRIFT);
  });

  it('says when the newest release is the pinned one and nothing drifted', () => {
    const results: CliDrift[] = [{ cli: CODEX, pinned: version, newest: version, differences: [] }];
    expect(formatDrift(results)).toBe(
      `${CODEX}: pinned ${version}, newest ${version}: no drift (same version, compared anyway)\n` +
        'no drift: every CLI still matches its pinned fixtures\n',
    );
    expect(driftExitCode(results)).toBe(EXIT_NO_DRIFT);
  });

  it('gives the reason and the fix of a check that could not run, and exits 2 even beside drift', () => {
    const results: CliDrift[] = [
      { cli: CODEX, pinned: version, newest: '9.9.9', differences },
      {
        cli: '@google/gemini-cli',
        pinned: '1.0.0',
        newest: '1.1.0',
        failure: { reason: 'the capture failed (exit 41)', fix: 'run the capture by hand' },
      },
    ];
    expect(formatDrift(results).split('\n')).toContain(
      '@google/gemini-cli: pinned 1.0.0, newest 1.1.0: could not run: the capture failed (exit 41). Fix: run the capture by hand',
    );
    expect(formatDrift(results).trimEnd().split('\n').pop()).toBe(
      'incomplete: fix what could not run and run it again',
    );
    expect(driftExitCode(results)).toBe(EXIT_COULD_NOT_RUN);
  });

  it('labels the version that ran as installed for the checks of the pinned CLIs', () => {
    expect(formatDrift([{ cli: CODEX, pinned: version, newest: version, differences: [] }], 'installed')).toMatch(
      new RegExp(`^${CODEX}: pinned ${version}, installed ${version}: no drift\n`),
    );
  });
});
