import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { normalizeTools } from '../../chat/chat-tools';
import { ModelCatalog } from '../../models/model-catalog';
import type { ChatMessage, ToolDefinition } from '../../core/chat-message';
import type { ChatRequest } from '../shared/provider-adapter';
import { readCodexCapture } from '../../../test/support/oracle-pins';
import { DEFAULT_INSTRUCTIONS } from './provider-a.constants';
import { loadFaithfulProfile } from './provider-a.faithful-profile';
import {
  buildChatBody,
  hostedToolRefusal,
  LITE_HEADER,
  LITE_METADATA_KEY,
  newTurnId,
  readInstallationId,
  sessionIdForChat,
  structuredPromptCacheKey,
  toLiteShape,
  turnMetadata,
  websocketFrame,
  windowIdFor,
  wireShapeFor,
} from './provider-a.request';

const catalog = ModelCatalog.load(undefined, ['provider_a']);
const fixture = JSON.parse(
  fs.readFileSync(path.join(__dirname, '__fixtures__', 'provider-a-chat-request.json'), 'utf8'),
) as {
  messages: ChatMessage[];
  tools: ToolDefinition[];
};

function request(
  overrides: Partial<ChatRequest> & { modelId?: string; effort?: string; verbosity?: string } = {},
): ChatRequest {
  const { modelId, effort, verbosity, tools = [], normalizedTools, ...rest } = overrides;
  return {
    model: catalog.resolve(modelId ?? 'gpt-5.6-sol', { reasoningEffort: effort, verbosity })!,
    messages: [{ role: 'user', content: 'hi' }],
    tools,
    normalizedTools: normalizedTools ?? normalizeTools(tools),
    faithful: false,
    sampling: { temperature: 0.2, topP: 0.9, maxTokens: 100, stop: ['x'] },
    conversationId: 'chat:test',
    ...rest,
  };
}

const SESSION = '47b61fd1-c0eb-3d05-2adc-5c4396baffee';

describe(buildChatBody.name, () => {
  it('builds the minimal body: joined instructions, no include/client_metadata/sampling/output cap', () => {
    const { body } = buildChatBody(
      request({
        messages: [
          { role: 'system', content: 'A' },
          { role: 'user', content: 'hi' },
          { role: 'developer', content: 'B' },
        ],
      }),
      { sessionId: SESSION },
    );
    expect(body).toEqual({
      model: 'gpt-5.6-sol',
      instructions: 'A\n\nB',
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
      stream: true,
      store: false,
      reasoning: { effort: 'low', summary: 'auto' },
      text: { verbosity: 'low' },
      prompt_cache_key: SESSION,
    });
  });

  it('sends response_format as text.format the way codex exec --output-schema does (oracle capture)', () => {
    const capture = readCodexCapture<{
      transcript: Array<{
        body?: { type?: string; generate?: boolean; text?: { format?: { schema: Record<string, unknown> } } };
      }>;
    }>('gpt-6.1-sol.output-schema.capture.json');
    const sent = capture.transcript.find(
      (entry) => entry.body?.type === 'response.create' && entry.body.generate !== false,
    )!.body!.text!;
    const schema = sent.format!.schema;
    const { body } = buildChatBody(
      request({ responseFormat: { type: 'json_schema', name: 'codex_output_schema', schema, strict: true } }),
      { sessionId: SESSION },
    );
    expect(body.text).toEqual(sent);
    // Same members in the same order as the CLI.
    expect(Object.keys((body.text as { format: object }).format)).toEqual(Object.keys(sent.format!));
    // The client's json_schema.description goes with it (docs/chat.md, the response_format row).
    const described = buildChatBody(
      request({
        responseFormat: { type: 'json_schema', name: 'n', schema, strict: true, description: 'One summary' },
      }),
      { sessionId: SESSION },
    ).body.text as { format: Record<string, unknown> };
    expect(described.format).toEqual({ ...sent.format, name: 'n', description: 'One summary' });
    expect(
      buildChatBody(request({ responseFormat: { type: 'json_object' } }), { sessionId: SESSION }).body.text,
    ).toEqual({ verbosity: 'low', format: { type: 'json_object' } });
  });

  it('uses the default instructions without system text', () => {
    expect(buildChatBody(request(), { sessionId: SESSION }).body.instructions).toBe(DEFAULT_INSTRUCTIONS);
  });

  it('maps history, tools and results in conversation order with normalized, matching call ids', () => {
    const built = buildChatBody(request({ messages: fixture.messages, tools: fixture.tools }), { sessionId: SESSION });
    expect(built.body.instructions).toBe('You are terse.\n\nUse tools when useful.');
    expect(built.body.input).toEqual([
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'Look at a.ts' },
          { type: 'input_image', image_url: 'data:image/png;base64,AAAA' },
          { type: 'input_text', text: 'please' },
        ],
      },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Sure.' }] },
      { type: 'function_call', call_id: 'call_1', name: 'read_file', arguments: '{"path":"a.ts"}' },
      // A function-wire call to a tool declared custom goes up as custom_tool_call (docs/upstream/provider-a.md §7.3).
      { type: 'custom_tool_call', call_id: 'call_2', name: 'apply_patch', input: '*** Begin Patch\n*** End Patch' },
      {
        type: 'custom_tool_call',
        call_id: 'call_3',
        name: 'apply_patch',
        input: '*** Begin Patch\n*** Add File: b.ts\n*** End Patch',
      },
      { type: 'function_call', call_id: 'call_4', name: 'noop', arguments: '{}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'export const a = 1;' },
      { type: 'custom_tool_call_output', call_id: 'call_2', output: 'Done\nok' },
      { type: 'custom_tool_call_output', call_id: 'call_3', output: 'Added b.ts' },
      { type: 'function_call_output', call_id: 'call_4', output: '' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Thanks' }] },
    ]);
  });

  it('flattens nested tools, passes flat and other types, gives parameterless functions an empty schema', () => {
    const { body } = buildChatBody(request({ tools: fixture.tools }), { sessionId: SESSION });
    expect(body.tools).toEqual([
      {
        type: 'function',
        name: 'read_file',
        description: 'Read a file',
        parameters: { type: 'object', properties: { path: { type: 'string' } } },
        strict: true,
      },
      { type: 'function', name: 'noop', parameters: { type: 'object', properties: {} } },
      {
        type: 'custom',
        name: 'apply_patch',
        description: 'Patch files',
        format: { type: 'grammar', syntax: 'lark', definition: 'start: /.+/' },
      },
      { type: 'function', name: 'flat_fn', description: 'Flat', parameters: { type: 'object', properties: {} } },
      { type: 'custom', name: 'flat_custom', description: 'Flat custom' },
      { type: 'web_search' },
    ]);
    expect(body).not.toHaveProperty('tool_choice');
    expect(body).not.toHaveProperty('parallel_tool_calls');
  });

  it('sends a flat tool without type as the function it was read as, keeping its fields, with an empty schema when it has none', () => {
    const tools = [
      {
        name: 'typeless',
        description: 'No type',
        parameters: { type: 'object', properties: { a: {} } },
        strict: false,
      },
      { name: 'bare' },
      { type: 'function', name: 'flat_bare', description: 'Typed, no parameters' },
    ];
    const { body } = buildChatBody(request({ tools }), { sessionId: SESSION });
    expect(body.tools).toEqual([
      {
        type: 'function',
        name: 'typeless',
        description: 'No type',
        parameters: { type: 'object', properties: { a: {} } },
        strict: false,
      },
      { type: 'function', name: 'bare', parameters: { type: 'object', properties: {} } },
      {
        type: 'function',
        name: 'flat_bare',
        description: 'Typed, no parameters',
        parameters: { type: 'object', properties: {} },
      },
    ]);
    // The type leads, as in the Codex CLI's own tools.
    expect((body.tools as Array<Record<string, unknown>>).map((tool) => Object.keys(tool)[0])).toEqual([
      'type',
      'type',
      'type',
    ]);
  });

  it('maps a forced tool_choice and forwards parallel_tool_calls: false', () => {
    const tools = [
      { type: 'function', function: { name: 'x' } },
      { type: 'custom', custom: { name: 'y' } },
    ];
    const forced = buildChatBody(
      request({ tools, toolChoice: { type: 'function', function: { name: 'x' } }, parallelToolCalls: false }),
      { sessionId: SESSION },
    ).body;
    expect(forced.tool_choice).toEqual({ type: 'function', name: 'x' });
    expect(forced.parallel_tool_calls).toBe(false);
    expect(
      buildChatBody(request({ tools, toolChoice: { type: 'custom', custom: { name: 'y' } } }), { sessionId: SESSION })
        .body.tool_choice,
    ).toEqual({ type: 'custom', name: 'y' });
    // A forced tool goes up as the type it is declared with, whichever type the choice names
    // (docs/chat.md, the tool_choice row): a custom tool forced as the function it was shown as.
    expect(
      buildChatBody(request({ tools, toolChoice: { type: 'function', function: { name: 'y' } } }), {
        sessionId: SESSION,
      }).body.tool_choice,
    ).toEqual({ type: 'custom', name: 'y' });
    expect(
      buildChatBody(request({ tools, toolChoice: { type: 'custom', custom: { name: 'x' } } }), { sessionId: SESSION })
        .body.tool_choice,
    ).toEqual({ type: 'function', name: 'x' });
    expect(buildChatBody(request({ tools, toolChoice: 'required' }), { sessionId: SESSION }).body.tool_choice).toBe(
      'required',
    );
    expect(
      buildChatBody(request({ tools, toolChoice: { type: 'function', name: 'x' } }), { sessionId: SESSION }).body
        .tool_choice,
    ).toEqual({ type: 'function', name: 'x' });
  });

  it('sends no tool_choice or parallel_tool_calls without tools', () => {
    const { body } = buildChatBody(request({ toolChoice: 'auto', parallelToolCalls: true }), { sessionId: SESSION });
    expect(body).not.toHaveProperty('tools');
    expect(body).not.toHaveProperty('tool_choice');
    expect(body).not.toHaveProperty('parallel_tool_calls');
  });

  it('normalizes a 75-character call id identically on both halves of the pair', () => {
    const longId = 'call_' + 'a'.repeat(70);
    const hashed = '04ce2191371fcc8c505c461d9b417d038242cec75f94e2ba6a9b85851d8e949d';
    const { body } = buildChatBody(
      request({
        messages: [
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: longId, type: 'function', function: { name: 'f', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: longId, content: 'r' },
        ],
      }),
      { sessionId: SESSION },
    );
    expect((body.input as Array<{ call_id: string }>).map((item) => item.call_id)).toEqual([hashed, hashed]);
  });

  it('resolves model, effort, verbosity and tier from the catalog row and request overrides', () => {
    const fast = buildChatBody(request({ modelId: 'gpt-5.6-terra-fast-high' }), { sessionId: SESSION }).body;
    expect(fast).toMatchObject({
      model: 'gpt-5.6-terra',
      reasoning: { effort: 'high', summary: 'auto' },
      text: { verbosity: 'low' },
      service_tier: 'priority',
    });
    const plain = buildChatBody(request({ modelId: 'gpt-5.6-terra' }), { sessionId: SESSION }).body;
    expect(plain).not.toHaveProperty('service_tier');
    expect(plain.reasoning).toEqual({ effort: 'medium', summary: 'auto' });
    const overridden = buildChatBody(request({ modelId: 'gpt-5.6-terra', verbosity: 'high', effort: 'xhigh' }), {
      sessionId: SESSION,
    }).body;
    expect(overridden).toMatchObject({ text: { verbosity: 'high' }, reasoning: { effort: 'xhigh' } });
  });

  it('builds the faithful body from the profile: scaffold with today, developer message, profile tools, client_metadata', () => {
    const profile = loadFaithfulProfile(undefined);
    const { body } = buildChatBody(
      request({
        faithful: true,
        messages: [
          { role: 'system', content: 'S1' },
          { role: 'developer', content: 'S2' },
          { role: 'user', content: 'hi' },
        ],
        tools: [{ type: 'function', function: { name: 'client_tool' } }],
        toolChoice: 'required',
      }),
      {
        sessionId: SESSION,
        faithful: {
          profile,
          turnId: 'turn-1',
          installationId: 'install-test-1',
          turnMetadata: '{"turn_id":"turn-1"}',
          now: new Date('2026-04-05T10:00:00Z'),
          timeZone: 'UTC',
          shape: 'classic',
        },
      },
    );
    expect(body.instructions).toBe(profile.instructions);
    const input = body.input as Array<Record<string, unknown>>;
    expect(JSON.stringify(input[0])).toContain('<current_date>2026-04-05</current_date>');
    expect(input[1]).toEqual({
      type: 'message',
      role: 'developer',
      content: [
        { type: 'input_text', text: 'S1' },
        { type: 'input_text', text: 'S2' },
      ],
    });
    expect(input[2]).toEqual({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] });
    expect(body.tools).toEqual(profile.tools);
    expect(body.tool_choice).toBe('auto');
    expect(body.parallel_tool_calls).toBe(true);
    expect(body.include).toEqual(['reasoning.encrypted_content']);
    expect(body.client_metadata).toEqual({
      session_id: SESSION,
      thread_id: SESSION,
      turn_id: 'turn-1',
      root_turn_id: 'turn-1',
      'x-codex-installation-id': 'install-test-1',
      'x-codex-window-id': `${SESSION}:0`,
      'x-codex-turn-metadata': '{"turn_id":"turn-1"}',
    });
  });

  it('writes the turn metadata as compact JSON with the members and order of Codex CLI 0.171.0', () => {
    const model = {
      requestedId: 'gpt-6.1-sol-high',
      catalogId: 'gpt-6.1-sol-high',
      provider: 'provider_a' as const,
      upstreamModel: 'gpt-6.1-sol',
      reasoningEffort: 'high',
      verbosity: 'low',
      serviceTier: null,
    };
    const text = turnMetadata({ sessionId: 's', turnId: 't', installationId: 'i', model, startedAtMs: 5 });
    expect(text).not.toContain(': ');
    const parsed = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual([
      'installation_id',
      'session_id',
      'thread_id',
      'agent_name',
      'turn_id',
      'window_id',
      'window_number',
      'context_window_id',
      'request_kind',
      'history_initialization',
      'root_turn_id',
      'thread_source',
      'turn_trigger',
      'sandbox',
      'sandbox_mode',
      'auto_review_enabled',
      'node_repl_auto_review_required',
      'node_repl_disabled',
      'turn_started_at_unix_ms',
      'analytics_enabled',
      'model',
      'reasoning_effort',
    ]);
    expect(parsed).toMatchObject({
      installation_id: 'i',
      session_id: 's',
      thread_id: 's',
      turn_id: 't',
      root_turn_id: 't',
      window_id: 's:0',
      request_kind: 'turn',
      sandbox: 'seatbelt',
      turn_started_at_unix_ms: 5,
      model: 'gpt-6.1-sol',
      reasoning_effort: 'high',
    });
  });

  it('adds type to the WebSocket frame, and the send time only in faithful mode', () => {
    expect(websocketFrame({ model: 'm' }, 5)).toEqual({ type: 'response.create', model: 'm' });
    expect(websocketFrame({ client_metadata: { a: '1' } }, 5)).toEqual({
      type: 'response.create',
      client_metadata: { a: '1', 'x-codex-ws-stream-request-start-ms': '5' },
    });
  });
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('provider_a identifiers', () => {
  it('derives the session id from the chat key as in the reference example', () => {
    expect(sessionIdForChat('chat:header:x-conversation-id:conv-42')).toBe('47b61fd1-c0eb-3d05-2adc-5c4396baffee');
  });

  it('gives the same chat the same session id and different chats different ones', () => {
    expect(sessionIdForChat('chat:a')).toBe(sessionIdForChat('chat:a'));
    expect(sessionIdForChat('chat:a')).not.toBe(sessionIdForChat('chat:b'));
  });

  it('uses a different seed for the structured cache key', () => {
    const key = structuredPromptCacheKey('caller\nop\nabc');
    expect(key).toMatch(UUID);
    expect(key).not.toBe(structuredPromptCacheKey('caller\nop\nabd'));
    expect(key).not.toBe(sessionIdForChat('caller\nop\nabc'));
  });

  it('makes a fresh UUIDv7 turn id each time', () => {
    const first = newTurnId();
    expect(first).toMatch(UUID);
    expect(first[14]).toBe('7');
    expect(newTurnId()).not.toBe(first);
  });

  it('formats the window id', () => {
    expect(windowIdFor('s')).toBe('s:0');
  });

  it('reads installation_id trimmed, else makes up a random id it never writes', () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'pa-ids-'));
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'pa-ids-'));
    try {
      fs.writeFileSync(path.join(home, 'installation_id'), ' install-test-1 \n');
      expect(readInstallationId(home)).toBe('install-test-1');
      fs.writeFileSync(path.join(empty, 'installation_id'), '  \n');
      const madeUp = readInstallationId(empty);
      expect(madeUp).toMatch(UUID);
      expect(readInstallationId(path.join(empty, 'missing'))).toMatch(UUID);
      expect(readInstallationId(path.join(empty, 'missing'))).not.toBe(madeUp);
      expect(fs.readFileSync(path.join(empty, 'installation_id'), 'utf8')).toBe('  \n');
      expect(fs.existsSync(path.join(empty, 'missing'))).toBe(false);
    } finally {
      for (const dir of [home, empty]) fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

const classic = {
  model: 'gpt-6.1-sol',
  instructions: 'Be brief.',
  input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
  stream: true,
  store: false,
  reasoning: { effort: 'low', summary: 'auto' },
  prompt_cache_key: 'k',
  tools: [
    { type: 'function', name: 'read_file', parameters: { type: 'object', properties: {} } },
    { type: 'custom', name: 'apply_patch', description: 'd' },
  ],
  tool_choice: 'auto',
  parallel_tool_calls: true,
};

describe('the Responses lite request shape (docs/providers.md "Two request shapes")', () => {
  it('follows use_responses_lite under auto, and PROVIDER_A_WIRE when forced', () => {
    expect(wireShapeFor('auto', { provider: 'provider_a', slug: 'a', responsesLite: true })).toBe('lite');
    expect(wireShapeFor('auto', { provider: 'provider_a', slug: 'a', responsesLite: false })).toBe('classic');
    expect(wireShapeFor('auto', undefined)).toBe('classic');
    expect(wireShapeFor('classic', { provider: 'provider_a', slug: 'a', responsesLite: true })).toBe('classic');
    expect(wireShapeFor('lite', undefined)).toBe('lite');
  });

  it('moves tools into an additional_tools item and instructions into a developer message, ahead of the conversation (WebSocket: the flag in client_metadata)', () => {
    const { body, headers } = toLiteShape({ headers: { a: '1' }, body: classic }, 'ws');
    expect(body).not.toHaveProperty('tools');
    expect(body).not.toHaveProperty('instructions');
    expect(body.input).toEqual([
      {
        type: 'additional_tools',
        role: 'developer',
        tools: [{ type: 'namespace', name: 'functions', description: '', tools: classic.tools }],
      },
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Be brief.' }] },
      classic.input[0],
    ]);
    expect(body.reasoning).toEqual({ effort: 'low', summary: 'auto', context: 'all_turns' });
    expect(body.client_metadata).toEqual({ [LITE_METADATA_KEY]: 'true' });
    expect(body).toMatchObject({ tool_choice: 'auto', parallel_tool_calls: true, prompt_cache_key: 'k' });
    expect(headers).toEqual({ a: '1' });
  });

  it('over HTTP carries the flag as a header, keeps faithful client_metadata as it is, and leaves hosted tools out', () => {
    const faithful = {
      ...classic,
      client_metadata: { session_id: 's' },
      tools: [
        ...classic.tools,
        { type: 'web_search' },
        { type: 'namespace', name: 'clock', description: 'c', tools: [] },
      ],
    };
    const { body, headers } = toLiteShape({ headers: {}, body: faithful }, 'sse');
    expect(headers).toEqual({ [LITE_HEADER]: 'true' });
    expect(body.client_metadata).toEqual({ session_id: 's' });
    const [tools] = body.input as Array<Record<string, any>>;
    expect(tools.tools.map((entry: Record<string, unknown>) => entry.name)).toEqual(['functions', 'clock']);
  });

  it('sends no additional_tools item without tools, and always sets reasoning.context', () => {
    const { tools: _tools, reasoning: _reasoning, ...plain } = classic;
    const { body } = toLiteShape({ headers: {}, body: plain }, 'ws');
    expect((body.input as Array<Record<string, unknown>>).map((item) => item.type)).toEqual(['message', 'message']);
    expect(body.reasoning).toEqual({ context: 'all_turns' });
  });
});

describe('hostedToolRefusal (a lite model and a client hosted tool)', () => {
  const fn = { type: 'function', function: { name: 'read_file' } };

  it('passes function, custom, untyped and namespace tools: the lite shape carries them', () => {
    const tools = [
      fn,
      { name: 'flat' },
      { type: 'custom', name: 'patch' },
      { type: 'namespace', name: 'n', tools: [] },
    ];
    const classicModels = jest.fn(() => ['gpt-5.5']);
    expect(hostedToolRefusal(tools, 'sol', classicModels)).toBeUndefined();
    // The way out is looked up only for a refusal: every turn of a lite model passes here.
    expect(classicModels).not.toHaveBeenCalled();
  });

  it('is 400 invalid_request on tools naming the first hosted tool, the model and the way out', () => {
    const refusal = hostedToolRefusal([fn, { type: 'web_search' }, { type: 'file_search' }], 'sol', () => ['gpt-5.5']);
    expect(refusal).toMatchObject({ code: 'invalid_request', param: 'tools' });
    expect(refusal!.publicMessage).toBe(
      'tools.1 is the hosted tool "web_search", which model "sol" cannot take: provider_a sends it the Responses lite request shape, where the Codex backend refuses hosted tools; use a model that takes hosted tools (the classic request shape: gpt-5.5; see GET /v1/models) or drop the tool',
    );
  });

  it('names a type that is no plain identifier in its own words, and says so when no model takes the classic shape', () => {
    const refusal = hostedToolRefusal([{ type: 'Web Search <x>' }], 'sol', () => []);
    expect(refusal!.publicMessage).toMatch(/^tools\.0 is a hosted tool, which model "sol" cannot take/);
    expect(refusal!.publicMessage).toMatch(
      /drop the tool: no model of this gateway takes the classic request shape now$/,
    );
  });
});
