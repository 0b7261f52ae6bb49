import * as fs from 'node:fs';
import * as path from 'node:path';
import { startGateway } from './support/create-test-app';
import type { FakeCodeAssist, FakeRecordedRequest } from './support/fake-provider-b';
import { useFakeProviderB } from './support/provider-b-harness';
import {
  callFrame,
  enqueueOnboardingThroughOperation,
  finishFrame,
  PERIMETER_REFUSAL,
  providerBSettings,
  textFrame,
} from './support/provider-b-fixtures';
import { postChatBody } from './support/chat-sse';
import { eventually } from './support/poll';
import {
  RETRY_NUDGES,
  THINKING_LEVEL_HIGH_MODELS,
  TOOL_RESULTS_CLOSED,
} from '../src/providers/provider-b/provider-b.constants';
import { geminiFixture } from '../scripts/oracle/capture-gemini-cli';
import { GEMINI_CLI } from '../scripts/oracle/oracle-clis';
import { GEMINI_CLI_PIN, pinnedCapture } from './support/oracle-pins';

/**
 * The oracle comparison: the gateway's Code Assist requests against what the real pinned
 * Gemini CLI sent in the same situations (captured by scripts/oracle/capture-gemini-cli.ts
 * into __fixtures__/gemini-cli-<pin>.capture.json). Every header and every field the backend
 * sees must match — values where they are protocol (setup bodies, headers), names and types where
 * they are content (prompts, ids). The intended differences below are the only ones allowed; each
 * is listed and justified in docs/providers.md ("Requests compared with the real Gemini CLI").
 */
interface CapturedRequest {
  readonly route: string;
  readonly method: string;
  readonly path: string;
  readonly query: Record<string, string>;
  readonly headers: Record<string, string>;
  readonly body: any;
}
interface Capture {
  readonly version: string;
  readonly scenarios: { readonly name: string; readonly requests: CapturedRequest[] }[];
}

const FIXTURE = pinnedCapture(GEMINI_CLI, geminiFixture(GEMINI_CLI_PIN));
const capture: Capture = JSON.parse(fs.readFileSync(FIXTURE, 'utf8'));
const cliRequests = (name: string) => capture.scenarios.find((scenario) => scenario.name === name)!.requests;

/**
 * Intended difference 1: the CLI's own bookkeeping calls around a turn (quota display, experiments,
 * metrics); the gateway makes none of them per turn (its plan-usage read of `retrieveUserQuota`,
 * outside turns, is compared by value below).
 */
const CLI_ONLY_ROUTES = new Set([
  'retrieveUserQuota',
  'listExperiments',
  'recordCodeAssistMetrics',
  'fetchAdminControls',
  'getCodeAssistGlobalUserSetting',
  'countTokens',
]);
/** Intended difference 2: headers Node's fetch adds by the Fetch standard and cannot leave out. */
const FETCH_ONLY_HEADERS = ['accept-language', 'sec-fetch-mode'];
/** Intended difference 3: sampling defaults the CLI sets for its own agent; the gateway forwards only the client's. */
const CLI_ONLY_GENERATION_CONFIG = ['temperature', 'topP', 'topK', 'thinkingConfig.thinkingBudget'];

/** Headers as the backend sees them, minus transport framing, with the bearer and the Node version abstracted. */
function comparableHeaders(
  headers: Record<string, unknown>,
  extraToDrop: readonly string[] = [],
): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (['host', 'content-length', ...extraToDrop].includes(name)) continue;
    if (name === 'authorization') result[name] = String(value).replace(/^Bearer .+$/, 'Bearer <token>');
    else if (name === 'x-goog-api-client')
      result[name] = String(value).replace(/^gl-node\/.+$/, 'gl-node/<node version>');
    else result[name] = value;
  }
  return result;
}

/** The names and JSON types of a value, all the way down (array members merged). */
function shape(value: unknown): unknown {
  if (Array.isArray(value))
    return [...new Set(value.map((item) => JSON.stringify(shape(item))))].sort().map((item) => JSON.parse(item));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, shape((value as Record<string, unknown>)[key])]),
    );
  }
  return value === null ? 'null' : typeof value;
}

function withoutPaths(value: any, paths: readonly string[]): any {
  const copy = structuredClone(value);
  for (const dotted of paths) {
    const keys = dotted.split('.');
    const parent = keys.slice(0, -1).reduce((node: any, key) => node?.[key], copy);
    if (parent) delete parent[keys.at(-1)!];
  }
  return copy;
}

const gatewayCalls = (requests: FakeRecordedRequest[]) =>
  requests.map((request) => [request.method, request.path, request.query]);
const cliCalls = (requests: CapturedRequest[]) =>
  requests
    .filter((request) => !CLI_ONLY_ROUTES.has(request.route))
    .map((request) => [request.method, request.path, request.query]);

describe(`provider_b requests match the real Gemini CLI ${capture.version}`, () => {
  let fake: FakeCodeAssist;
  let home: string;

  const harness = useFakeProviderB({ homePrefix: 'provider-b-oracle-' });
  beforeEach(() => {
    fake = harness.fake();
    home = harness.home();
  });

  it('is compared against the pinned CLI version', () => {
    expect(capture.version).toBe(GEMINI_CLI_PIN);
  });

  it("sends the retry notes the pinned CLI sends: each is in the installed CLI's own code", () => {
    const bundle = path.join(__dirname, '..', 'oracles', 'node_modules', '@google', 'gemini-cli', 'bundle');
    const notes = [...Object.values(RETRY_NUDGES), TOOL_RESULTS_CLOSED];
    const found = new Set<string>();
    for (const file of fs.readdirSync(bundle).filter((name) => name.endsWith('.js'))) {
      const code = fs.readFileSync(path.join(bundle, file), 'utf8');
      for (const note of notes) if (code.includes(JSON.stringify(note)) || code.includes(`'${note}'`)) found.add(note);
      if (found.size === notes.length) break;
    }
    expect([...found].sort()).toEqual([...notes].sort());
  });

  it("asks for thinkingLevel HIGH on exactly the ids the installed CLI's chat-base-3 config names", () => {
    const bundle = path.join(__dirname, '..', 'oracles', 'node_modules', '@google', 'gemini-cli', 'bundle');
    const configured = new Set<string>();
    for (const file of fs.readdirSync(bundle).filter((name) => name.endsWith('.js'))) {
      const code = fs.readFileSync(path.join(bundle, file), 'utf8');
      if (!code.includes('"chat-base-3"')) continue;
      for (const match of code.matchAll(/"([\w.-]+)": \{\s*extends: "chat-base-3"/g)) configured.add(match[1]);
    }
    expect([...THINKING_LEVEL_HIGH_MODELS].sort()).toEqual([...configured].sort());
  });

  it('setup, headers and the tool-turn envelope (discovered project, a tool call and its result)', async () => {
    const gateway = await startGateway({ ...providerBSettings(fake, home), GATEWAY_PROVIDERS: 'provider_b' });
    try {
      fake.enqueue('loadCodeAssist', {
        body: {
          currentTier: { id: 'standard-tier', name: 'Gemini Code Assist' },
          cloudaicompanionProject: 'fake-project',
        },
      });
      fake.enqueue('streamGenerateContent', {
        frames: [
          { json: callFrame('list_directory', { dir_path: '.' }, { signature: 'oracle-signature' }) },
          { json: finishFrame('STOP') },
        ],
      });
      fake.enqueue('streamGenerateContent', { frames: [{ json: textFrame('done') }, { json: finishFrame('STOP') }] });
      const tools = [
        {
          type: 'function',
          function: {
            name: 'list_directory',
            description: 'List a directory',
            parameters: { type: 'object', properties: { dir_path: { type: 'string' } }, required: ['dir_path'] },
          },
        },
      ];
      const messages = [
        { role: 'system', content: 'You are an agent.' },
        { role: 'user', content: 'List the files, then say done.' },
      ];
      const first = await chat(gateway.url, { tools, messages });
      const call = first.flatMap((chunk: any) => chunk.choices[0]?.delta?.tool_calls ?? [])[0];
      await chat(gateway.url, {
        tools,
        messages: [
          ...messages,
          { role: 'assistant', content: null, tool_calls: [call] },
          { role: 'tool', tool_call_id: call.id, content: 'README.md' },
        ],
      });
    } finally {
      await gateway.close();
    }

    const cli = cliRequests('discovered-project-tool-turn');
    const ours = fake.requests();
    // Order of calls: setup, then one generate call per turn.
    expect(gatewayCalls(ours)).toEqual(cliCalls(cli));
    const pairs = cli
      .filter((request) => !CLI_ONLY_ROUTES.has(request.route))
      .map((request, index) => [request, ours[index]] as const);

    for (const [theirs, mine] of pairs) {
      expect({
        route: mine.route,
        headers: comparableHeaders(mine.headers as Record<string, unknown>, FETCH_ONLY_HEADERS),
      }).toEqual({
        route: theirs.route,
        headers: comparableHeaders(theirs.headers),
      });
    }
    // loadCodeAssist without a configured project: the very same body.
    expect(ours[0].body).toEqual(cli[0].body);

    const [cliFirst, cliSecond] = cli
      .filter((request) => request.route === 'streamGenerateContent')
      .map((request) => request.body);
    const [ourFirst, ourSecond] = ours
      .filter((request) => request.route === 'streamGenerateContent')
      .map((request) => request.body);
    for (const [theirs, mine] of [
      [cliFirst, ourFirst],
      [cliSecond, ourSecond],
    ]) {
      // Envelope and request members: the same names and types everywhere (contents and the tools' own schemas aside).
      const strip = (body: any, extra: readonly string[]) =>
        shape(
          withoutPaths(body, [
            'request.contents',
            'request.tools',
            ...extra.map((key) => `request.generationConfig.${key}`),
          ]),
        );
      expect(strip(mine, [])).toEqual(strip(theirs, CLI_ONLY_GENERATION_CONFIG));
      expect(mine.model).toBe(theirs.model);
      expect(mine.project).toBe(theirs.project);
      expect(mine.request.generationConfig.thinkingConfig.includeThoughts).toBe(
        theirs.request.generationConfig.thinkingConfig.includeThoughts,
      );
      // Every declaration as {name, description, parametersJsonSchema}.
      expect(shape(mine.request.tools.map((tool: any) => Object.keys(tool)))).toEqual(
        shape(theirs.request.tools.map((tool: any) => Object.keys(tool))),
      );
      for (const declaration of [
        ...mine.request.tools[0].functionDeclarations,
        ...theirs.request.tools[0].functionDeclarations,
      ]) {
        expect(Object.keys(declaration).sort()).toEqual(['description', 'name', 'parametersJsonSchema']);
      }
    }
    // The continuation: the model's call turn and the function-response turn, part for part.
    const tail = (body: any) =>
      body.request.contents.slice(-2).map((content: any) => ({ role: content.role, parts: shape(content.parts) }));
    expect(tail(ourSecond)).toEqual(tail(cliSecond));
  });

  it("the plan-usage read is the CLI's retrieveUserQuota, after the same set-up", async () => {
    fake.enqueue('loadCodeAssist', {
      body: {
        currentTier: { id: 'standard-tier', name: 'Gemini Code Assist' },
        cloudaicompanionProject: 'fake-project',
      },
    });
    const gateway = await startGateway({
      ...providerBSettings(fake, home),
      GATEWAY_PROVIDERS: 'provider_b',
      ACCOUNT_USAGE_REFRESH_INTERVAL: '5m',
    });
    try {
      await eventually(() => fake.requests('retrieveUserQuota').length > 0);
    } finally {
      await gateway.close();
    }
    const cli = cliRequests('discovered-project-tool-turn');
    const [theirSetup, theirRead] = [
      cli.find((request) => request.route === 'loadCodeAssist')!,
      cli.find((request) => request.route === 'retrieveUserQuota')!,
    ];
    const ours = fake.requests();
    expect(ours.map((request) => request.route)).toEqual(['loadCodeAssist', 'retrieveUserQuota']);
    for (const [theirs, mine] of [
      [theirSetup, ours[0]],
      [theirRead, ours[1]],
    ] as const) {
      expect({
        method: mine.method,
        path: mine.path,
        query: mine.query,
        body: mine.body,
        headers: comparableHeaders(mine.headers as Record<string, unknown>, FETCH_ONLY_HEADERS),
      }).toEqual({
        method: theirs.method,
        path: theirs.path,
        query: theirs.query,
        body: theirs.body,
        headers: comparableHeaders(theirs.headers),
      });
    }
  });

  /**
   * One chat on a gateway with `settings`, compared with the CLI's `scenario`: the same calls, the
   * same headers on each call the gateway makes, the same set-up body. Both sides' requests are
   * given back for the scenario's own checks.
   */
  async function oneTurnAgainst(scenario: string, settings: Record<string, string>, body: Record<string, unknown>) {
    const gateway = await startGateway(settings);
    try {
      await chat(gateway.url, body);
    } finally {
      await gateway.close();
    }
    const cli = cliRequests(scenario);
    const ours = fake.requests();
    expect(gatewayCalls(ours)).toEqual(cliCalls(cli));
    const sent = cli.filter((request) => !CLI_ONLY_ROUTES.has(request.route));
    for (const [index, theirs] of sent.entries())
      expect(comparableHeaders(ours[index].headers as Record<string, unknown>, FETCH_ONLY_HEADERS)).toEqual(
        comparableHeaders(theirs.headers),
      );
    expect(ours[0].body).toEqual(sent[0].body);
    return { ours, sent };
  }

  it('a Gemini 3 turn: the id asked for in the User-Agent, the backend id in the body, thinkingLevel HIGH', async () => {
    fake.enqueue('loadCodeAssist', {
      body: {
        currentTier: { id: 'standard-tier', name: 'Gemini Code Assist' },
        cloudaicompanionProject: 'fake-project',
      },
    });
    fake.enqueue('streamGenerateContent', { frames: [{ json: textFrame('done') }, { json: finishFrame('STOP') }] });
    const { ours, sent } = await oneTurnAgainst(
      'gemini-3-text-turn',
      { ...providerBSettings(fake, home), GATEWAY_PROVIDERS: 'provider_b' },
      { model: 'gemini-3.5-flash', messages: [{ role: 'user', content: 'hi' }] },
    );
    const [theirs, mine] = [sent[1].body, ours[1].body];
    const strip = (body: any, extra: readonly string[]) =>
      shape(
        withoutPaths(body, [
          // The CLI's own system prompt and tools; the turn above sends neither (the tool turn compares them).
          'request.contents',
          'request.systemInstruction',
          'request.tools',
          ...extra.map((key) => `request.generationConfig.${key}`),
        ]),
      );
    expect(strip(mine, [])).toEqual(strip(theirs, CLI_ONLY_GENERATION_CONFIG));
    expect([mine.model, mine.project]).toEqual([theirs.model, theirs.project]);
    expect(mine.request.generationConfig.thinkingConfig).toEqual(theirs.request.generationConfig.thinkingConfig);
  });

  it('set-up refused by VPC Service Controls goes on with the configured project', async () => {
    fake.enqueue('loadCodeAssist', PERIMETER_REFUSAL);
    const { ours, sent } = await oneTurnAgainst(
      'vpc-sc-configured-project',
      { ...providerBSettings(fake, home, { project: 'perimeter-project' }), GATEWAY_PROVIDERS: 'provider_b' },
      { messages: [{ role: 'user', content: 'hi' }] },
    );
    expect(ours[1].body.project).toBe(sent[1].body.project);
  });

  it('setup with a configured project that the backend onboards through a long-running operation', async () => {
    const gateway = await startGateway({
      ...providerBSettings(fake, home, { project: 'oracle-project-123' }),
      GATEWAY_PROVIDERS: 'provider_b',
      PROVIDER_B_ONBOARDING_POLL_INTERVAL: '10ms',
    });
    try {
      enqueueOnboardingThroughOperation(fake, 'oracle-project-123');
      await chat(gateway.url, { messages: [{ role: 'user', content: 'hi' }] });
    } finally {
      await gateway.close();
    }
    const cli = cliRequests('configured-project-onboarding');
    const ours = fake.requests();
    expect(gatewayCalls(ours)).toEqual(cliCalls(cli));
    const setup = cli.filter((request) => ['loadCodeAssist', 'onboardUser', 'getOperation'].includes(request.route));
    for (const [index, theirs] of setup.entries()) {
      const mine = ours[index];
      expect({
        route: mine.route,
        method: mine.method,
        path: mine.path,
        body: mine.body ?? null,
        headers: comparableHeaders(mine.headers as Record<string, unknown>, FETCH_ONLY_HEADERS),
      }).toEqual({
        route: theirs.route,
        method: theirs.method,
        path: theirs.path,
        body: theirs.body,
        headers: comparableHeaders(theirs.headers),
      });
    }
    expect(ours.at(-1)!.body.project).toBe(
      cli.find((request) => request.route === 'streamGenerateContent')!.body.project,
    );
  });
});

async function chat(url: string, body: Record<string, unknown>): Promise<any[]> {
  const response = await postChatBody({ url }, { model: 'gemini-2.5-pro', stream: true, ...body });
  expect(response.status).toBe(200);
  return (await response.text())
    .split('\n')
    .filter((line) => line.startsWith('data: {'))
    .map((line) => JSON.parse(line.slice(6)));
}
