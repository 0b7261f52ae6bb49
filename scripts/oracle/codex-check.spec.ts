import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { CodexCapture } from './codex-check';
import {
  CODEX_FIXTURES,
  CODEX_RUNS,
  codexCapturesWithoutRun,
  codexEffortFacts,
  codexModelFacts,
  codexRequests,
  codexVersionDifferences,
} from './codex-check';
import { CODEX, pinnedVersion } from './oracle-clis';
import { diffFacts, diffRecorded } from './shape-diff';

// What `npm run oracle:codex` and `npm run oracle:drift` compare for Codex, on the fixtures of the
// pinned version (docs/providers.md, "Following the upstream CLIs").
const version = pinnedVersion(CODEX);
const fixture = (name: string): string => path.join(CODEX_FIXTURES, `codex-${version}.${name}`);
const read = <T>(name: string): T => JSON.parse(fs.readFileSync(fixture(name), 'utf8')) as T;
const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe('the Codex oracle comparison', () => {
  it.each(CODEX_RUNS.map((run) => run.name))('shows no drift when %s is compared with itself', (name) => {
    const capture = read<CodexCapture>(name);
    expect(diffRecorded(name, codexRequests(capture), codexRequests(clone(capture)))).toEqual([]);
  });

  const websocket = read<CodexCapture>('gpt-6.1-sol.capture.json');
  type Entry = { kind: string; headers?: Record<string, string>; body?: Record<string, unknown> };
  const entries = (capture: CodexCapture): Entry[] => capture.transcript as Entry[];

  it('shows exactly an added header, on the request that sent it', () => {
    const changed = clone(websocket);
    const handshake = entries(changed).find((entry) => entry.kind === 'ws-handshake')!;
    handshake.headers!['x-codex-websocket-max-message-bytes'] = '1048576';
    expect(diffRecorded('ws', codexRequests(websocket), codexRequests(changed))).toEqual([
      {
        where: 'ws · ws-handshake /backend-api/codex/responses #1',
        change: 'added',
        key: 'header x-codex-websocket-max-message-bytes',
        fresh: ['1048576'],
      },
    ]);
  });

  it('shows a new version in the user-agent as a changed value', () => {
    const changed = clone(websocket);
    const handshake = entries(changed).find((entry) => entry.kind === 'ws-handshake')!;
    const before = handshake.headers!['user-agent'];
    handshake.headers!['user-agent'] = before.split(version).join('9.9.9');
    const [difference, ...rest] = diffRecorded('ws', codexRequests(websocket), codexRequests(changed));
    expect(rest).toEqual([]);
    expect(difference).toMatchObject({
      change: 'changed',
      key: 'header user-agent',
      committed: [expect.stringContaining(`/${version}`)],
      fresh: [expect.stringContaining('/9.9.9')],
    });
  });

  it('shows exactly a body field whose JSON type changed', () => {
    const changed = clone(websocket);
    const message = entries(changed).find((entry) => entry.kind === 'ws-message')!;
    message.body!.store = 'false';
    expect(diffRecorded('ws', codexRequests(websocket), codexRequests(changed))).toEqual([
      {
        where: 'ws · ws-message response.create #1',
        change: 'changed',
        key: 'body store',
        committed: ['false'],
        fresh: ['"false"'],
      },
    ]);
  });

  it('shows the values the gateway copies: store, stream, tool_choice, include, reasoning.context, the lite flag', () => {
    const changed = clone(websocket);
    for (const entry of entries(changed)) {
      const body = entry.body as Record<string, any> | undefined;
      if (entry.kind !== 'ws-message' || !body) continue;
      body.store = true;
      body.stream = false;
      body.tool_choice = 'required';
      body.include = ['reasoning.summary'];
      body.reasoning.context = 'last_turn';
      body.client_metadata.ws_request_header_x_openai_internal_codex_responses_lite = 'false';
    }
    const keys = diffRecorded('ws', codexRequests(websocket), codexRequests(changed)).map((difference) => [
      difference.key,
      difference.committed,
      difference.fresh,
    ]);
    expect(keys).toContainEqual(['body store', ['false'], ['true']]);
    expect(keys).toContainEqual(['body stream', ['true'], ['false']]);
    expect(keys).toContainEqual(['body tool_choice', ['"auto"'], ['"required"']]);
    expect(keys).toContainEqual(['body include[]', ['"reasoning.encrypted_content"'], ['"reasoning.summary"']]);
    expect(keys).toContainEqual(['body reasoning.context', ['"all_turns"'], ['"last_turn"']]);
    expect(keys).toContainEqual([
      'body client_metadata.ws_request_header_x_openai_internal_codex_responses_lite',
      ['"true"'],
      ['"false"'],
    ]);
  });

  it('shows no drift for what another run sends differently: session, turn and item ids, the request clock', () => {
    const rerun = JSON.parse(
      JSON.stringify(websocket)
        .replace(
          /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-([0-9a-f]{4})-[0-9a-f]{12}/g,
          '01a22cf4-7e31-7963-$1-8c3731a1b020',
        )
        .replace(
          /"x-codex-ws-stream-request-start-ms":"\d{13}"/g,
          '"x-codex-ws-stream-request-start-ms":"1800000000000"',
        ),
    ) as CodexCapture;
    expect(diffRecorded('ws', codexRequests(websocket), codexRequests(rerun))).toEqual([]);
  });

  it('shows what the per-model flags decide by value: a CLI that sends another effort, verbosity or parallel_tool_calls drifts', () => {
    const capture = read<CodexCapture>('gpt-6.1-sol.http.models-served.live-defaults.capture.json');
    const changed = clone(capture);
    for (const entry of entries(changed)) {
      const body = entry.body as
        { reasoning?: { effort?: string }; text?: { verbosity?: string }; parallel_tool_calls?: boolean } | undefined;
      if (body?.reasoning?.effort === 'high') body.reasoning.effort = 'low';
      if (body?.text?.verbosity === 'medium') body.text.verbosity = 'low';
      if (body?.parallel_tool_calls === false) body.parallel_tool_calls = true;
    }
    const keys = diffRecorded('http', codexRequests(capture), codexRequests(changed)).map((difference) => [
      difference.key,
      difference.committed,
      difference.fresh,
    ]);
    expect(keys).toContainEqual(['body reasoning.effort', ['"high"'], ['"low"']]);
    expect(keys).toContainEqual(['body text.verbosity', ['"medium"'], ['"low"']]);
    expect(keys).toContainEqual(['body parallel_tool_calls', ['false'], ['true']]);
  });

  it('re-runs every committed capture of the pinned version', () => {
    expect(codexCapturesWithoutRun(version)).toEqual([]);
  });

  it('names a committed capture that no run re-captures', () => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'codex-fixtures-'));
    try {
      for (const name of ['gpt-5.5.capture.json', 'gpt-5.5.new-mode.capture.json', 'models.json'])
        fs.writeFileSync(path.join(folder, `codex-1.2.3.${name}`), '{}');
      fs.writeFileSync(path.join(folder, 'codex-1.2.2.other.capture.json'), '{}');
      expect(codexCapturesWithoutRun('1.2.3', folder)).toEqual(['gpt-5.5.new-mode.capture.json']);
    } finally {
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });

  it('shows an app-server turn that no longer chains to the previous response', () => {
    const appServer = read<CodexCapture>('gpt-5.5.app-server.capture.json');
    const changed = clone(appServer);
    for (const entry of entries(changed)) delete entry.body?.previous_response_id;
    expect(
      diffRecorded('app-server', codexRequests(appServer), codexRequests(changed)).map(
        (difference) => `${difference.change} ${difference.key}`,
      ),
    ).toContain('removed body previous_response_id');
  });

  it('counts the repeated model-list request once per distinct shape', () => {
    const list = entries(websocket).find((entry) => entry.kind === 'http')!;
    const changed: CodexCapture = { transcript: [...clone(websocket).transcript, clone(list)] };
    expect(diffRecorded('ws', codexRequests(websocket), codexRequests(changed))).toEqual([]);
  });

  it('compares the bundled model list by model and field, by value', () => {
    const models = read<{ models: Record<string, unknown>[] }>('models.json').models;
    expect(diffFacts('models', codexModelFacts(models), codexModelFacts(clone(models)))).toEqual([]);
    const changed = clone(models);
    // Any value the fixture does not hold: one more token than it lists.
    const window = Number(models[0].context_window) + 1;
    changed[0].context_window = window;
    changed.push({ ...clone(models[0]), slug: 'gpt-next' });
    const differences = diffFacts('models', codexModelFacts(models), codexModelFacts(changed));
    expect(differences.filter((difference) => difference.change === 'changed')).toEqual([
      {
        where: 'models',
        change: 'changed',
        key: `model ${String(models[0].slug)} context_window`,
        committed: [String(models[0].context_window)],
        fresh: [String(window)],
      },
    ]);
    expect(
      differences.filter((difference) => difference.change === 'added').map((difference) => difference.key),
    ).toEqual(expect.arrayContaining(['model gpt-next', 'model gpt-next context_window']));
  });

  it('reports a per-model flag that changed value (what the CLI sends depends on it)', () => {
    const models = read<{ models: Record<string, unknown>[] }>('models.json').models;
    const changed = clone(models);
    const [first] = changed;
    expect(first).toMatchObject({ support_verbosity: true, default_reasoning_summary: expect.any(String) });
    first.support_verbosity = false;
    first.default_reasoning_summary = 'detailed';
    (first.truncation_policy as { limit: number }).limit += 1;
    const keys = diffFacts('models', codexModelFacts(models), codexModelFacts(changed)).map(
      (difference) => `${difference.change} ${difference.key}`,
    );
    const slug = String(first.slug);
    expect(keys).toEqual(
      expect.arrayContaining([
        `changed model ${slug} support_verbosity`,
        `changed model ${slug} default_reasoning_summary`,
        `changed model ${slug} truncation_policy.limit`,
      ]),
    );
    expect(keys).toHaveLength(3);
  });

  it('compares the efforts table by value', () => {
    const efforts = read<{ efforts: Parameters<typeof codexEffortFacts>[0] }>('efforts.json').efforts;
    expect(diffFacts('efforts', codexEffortFacts(efforts), codexEffortFacts(clone(efforts)))).toEqual([]);
    const changed = clone(efforts);
    const [model] = Object.keys(changed);
    const [effort] = Object.keys(changed[model]);
    changed[model][effort].shape = changed[model][effort].shape === 'lite' ? 'classic' : 'lite';
    expect(diffFacts('efforts', codexEffortFacts(efforts), codexEffortFacts(changed))).toEqual([
      expect.objectContaining({ change: 'changed', key: `effort ${model}.${effort}.shape` }),
    ]);
  });

  it('shows a fixture recorded by another version than the pinned one', () => {
    for (const name of [...CODEX_RUNS.map((run) => run.name), 'models.json', 'efforts.json'])
      expect(codexVersionDifferences(name, read(name), version)).toEqual([]);
    expect(codexVersionDifferences('capture', { ...websocket, codex_version: '0.170.0' }, version)).toEqual([
      expect.objectContaining({ where: 'capture', change: 'changed', committed: ['0.170.0'], fresh: [version] }),
    ]);
    expect(codexVersionDifferences('capture', websocket.transcript, version)).toEqual([
      expect.objectContaining({ where: 'capture', committed: ['(none)'], fresh: [version] }),
    ]);
  });
});
