import * as fs from 'node:fs';
import * as path from 'node:path';
import type { CodexCapture } from './codex-check';
import { CODEX_FIXTURES, codexRequests } from './codex-check';
import type { CliDrift } from './drift-report';
import { driftExitCode, EXIT_COULD_NOT_RUN, EXIT_DRIFT, EXIT_NO_DRIFT, formatDrift } from './drift-report';
import { CLAUDE_CODE, CODEX, GEMINI_CLI, pinnedVersion } from './oracle-clis';
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
        `drift (docs/providers.md, "Re-pinning and re-capturing"): ${CODEX}: to follow 9.9.9, set "${CODEX}": "9.9.9" in oracles/package.json, run \`(cd oracles && npm install --package-lock-only --ignore-scripts) && node scripts/install-oracles.mjs\`, then capture with \`npm run oracle:codex -- --capture\` and move the version the gateway claims (the specs name it)`,
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

  it('names the command that captures the pinned CLI again when it no longer matches its own fixtures', () => {
    const summary = (cli: string) =>
      formatDrift([{ cli, pinned: '1.2.3', newest: '1.2.3', differences }], 'installed')
        .trimEnd()
        .split('\n')
        .pop();
    expect(summary(CODEX)).toBe(
      `drift (docs/providers.md, "Re-pinning and re-capturing"): ${CODEX}: the pinned CLI no longer prints or sends what its committed fixtures say; if a fixture, a fake or a capture script was changed on purpose, capture again with \`npm run oracle:codex -- --capture\` and review \`git diff\`, else undo that change`,
    );
    expect(summary(CLAUDE_CODE)).toContain('capture again with `npm run oracle:claude -- --capture`');
    expect(summary(GEMINI_CLI)).toContain(
      "capture again with `unshare -n sh -c 'ip link set lo up; node -r ./scripts/register-ts.cjs scripts/oracle/capture-gemini-cli.ts src/providers/provider-b/__fixtures__/gemini-cli-1.2.3.capture.json'`",
    );
    // oracle:drift on a newest release that is the pin: the same advice, nothing to re-pin.
    expect(formatDrift([{ cli: CODEX, pinned: '1.2.3', newest: '1.2.3', differences }])).toContain(
      'capture again with `npm run oracle:codex -- --capture`',
    );
  });

  it('names the install when a check of the pinned CLI ran another version', () => {
    expect(
      formatDrift([{ cli: CODEX, pinned: '1.2.3', newest: '1.2.2', differences }], 'installed')
        .trimEnd()
        .split('\n')
        .pop(),
    ).toBe(
      `drift (docs/providers.md, "Re-pinning and re-capturing"): ${CODEX}: oracles/node_modules holds 1.2.2, not the pinned 1.2.3: run \`node scripts/install-oracles.mjs\`, then this check again`,
    );
  });

  it('labels the version that ran as installed for the checks of the pinned CLIs', () => {
    expect(formatDrift([{ cli: CODEX, pinned: version, newest: version, differences: [] }], 'installed')).toMatch(
      new RegExp(`^${CODEX}: pinned ${version}, installed ${version}: no drift\n`),
    );
  });
});
