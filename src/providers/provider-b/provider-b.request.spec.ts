import type { ChatMessage, ToolDefinition } from '../../core/chat-message';
import { providerBChatRequest as chatRequest } from '../../../test/support/provider-b-fixtures';
import toolHistory from './__fixtures__/provider-b-tool-history.json';
import { CANCELLED_TOOL_OUTPUT } from '../shared/tool-pairing';
import { buildProviderBRequest, providerBSessionId } from './provider-b.request';
import { assertCarriedContent } from './provider-b.content-parts';

const options = { project: 'proj-1', userPromptId: 'req-1' };
const historyRequest = () => chatRequest({ messages: toolHistory.messages as ChatMessage[], tools: toolHistory.tools });

describe(buildProviderBRequest.name, () => {
  it('wraps the Gemini request in the Code Assist envelope with the bare model id', () => {
    const { envelope } = buildProviderBRequest(chatRequest(), options);
    expect(envelope).toEqual({
      model: 'gemini-2.5-pro',
      project: 'proj-1',
      user_prompt_id: 'req-1',
      request: {
        contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
        generationConfig: { thinkingConfig: { includeThoughts: true } },
        session_id: providerBSessionId('chat:test'),
      },
    });
  });

  it('maps system/developer to one systemInstruction, roles to user/model, and a tool run to one user content (docs/upstream/provider-b.md §13.11)', () => {
    const { envelope } = buildProviderBRequest(historyRequest(), options);
    expect(envelope.request.systemInstruction).toEqual({
      role: 'user',
      parts: [{ text: 'You are a coding agent.\n\nPrefer small diffs.' }],
    });
    expect(envelope.request.contents).toEqual([
      { role: 'user', parts: [{ text: 'Read three files.' }, { inlineData: { mimeType: 'image/png', data: 'AAAA' } }] },
      {
        role: 'model',
        parts: [
          { text: 'Reading them now.' },
          { functionCall: { id: 'call_a', name: 'read_file', args: { path: 'a.ts' } }, thoughtSignature: 'sig-a' },
          { functionCall: { id: 'call_b', name: 'list_dir', args: {} } },
          { functionCall: { id: 'call_c', name: 'apply_patch', args: { input: '*** Begin Patch\n*** End Patch' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { id: 'call_a', name: 'read_file', response: { output: 'export const a = 1;' } } },
          { functionResponse: { id: 'call_b', name: 'list_dir', response: { output: 'a.ts b.ts' } } },
          { functionResponse: { id: 'call_c', name: 'apply_patch', response: { output: 'Done' } } },
          // The user's next words join the function-response turn (adjacent roles coalesce, as in the CLI).
          { text: 'Thanks.' },
        ],
      },
    ]);
  });

  it('declares all tools in one entry; a custom tool without parameters gets the raw `input` fallback (docs/upstream/provider-b.md §13.14)', () => {
    const built = buildProviderBRequest(historyRequest(), options);
    expect(built.envelope.request.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'read_file',
            description: 'Read a file',
            parametersJsonSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
          },
          { name: 'list_dir', description: 'List a directory' },
          {
            name: 'apply_patch',
            description: 'Apply a patch',
            parametersJsonSchema: {
              type: 'object',
              properties: { input: { type: 'string', description: 'Raw text input for this tool.' } },
              required: ['input'],
            },
          },
        ],
      },
    ]);
    expect([...built.customToolNames]).toEqual(['apply_patch']);
    expect(built.envelope.request.toolConfig).toBeUndefined();
  });

  it("converts a request's tools once for all its attempts, counting the references it could not inline each time", () => {
    const request = chatRequest({
      tools: [
        {
          type: 'function',
          function: { name: 'walk', parameters: { type: 'object', properties: { next: { $ref: '#/$defs/none' } } } },
        },
      ],
    });
    const first = buildProviderBRequest(request, options);
    const second = buildProviderBRequest(request, options);
    expect(second.envelope.request.tools).toEqual(first.envelope.request.tools);
    expect(second.envelope.request.tools![0].functionDeclarations).toBe(
      first.envelope.request.tools![0].functionDeclarations,
    );
    expect(first.report.unresolvedRefs).toBe(1);
    expect(second.report.unresolvedRefs).toBe(1);
    expect(first.envelope.request.tools![0].functionDeclarations[0].parametersJsonSchema).toEqual({
      type: 'object',
      properties: { next: { type: 'object' } },
    });
  });

  it('replays a custom-wire call as {input}; a result for another id is dropped and the call answered as cancelled', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'custom', custom: { name: 'apply_patch', input: 'PATCH' } }],
      },
      { role: 'tool', tool_call_id: 'nope', content: 'x' },
    ];
    const built = buildProviderBRequest(chatRequest({ messages }), options);
    expect(built.envelope.request.contents[1]).toEqual({
      role: 'model',
      parts: [
        {
          functionCall: { id: 'c1', name: 'apply_patch', args: { input: 'PATCH' } },
          thoughtSignature: 'skip_thought_signature_validator',
        },
      ],
    });
    expect(built.envelope.request.contents[2]).toEqual({
      role: 'user',
      parts: [{ functionResponse: { id: 'c1', name: 'apply_patch', response: { output: CANCELLED_TOOL_OUTPUT } } }],
    });
    expect(built.report).toMatchObject({ cancelledToolCalls: 1, orphanToolResults: 1 });
  });

  it('leaves out an assistant message with neither text nor calls, so no model content goes up without parts', () => {
    for (const content of ['', null]) {
      const messages: ChatMessage[] = [
        { role: 'user', content: 'first' },
        { role: 'assistant', content },
        { role: 'user', content: 'second' },
      ];
      const { envelope } = buildProviderBRequest(chatRequest({ messages }), options);
      expect(envelope.request.contents).toEqual([{ role: 'user', parts: [{ text: 'first' }, { text: 'second' }] }]);
    }
  });

  it('sends an id-less history call and its answer without an id', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ type: 'function', function: { name: 'ls', arguments: '{}' } }],
      },
    ];
    const { envelope } = buildProviderBRequest(chatRequest({ messages }), options);
    expect(envelope.request.contents.slice(1)).toEqual([
      {
        role: 'model',
        parts: [{ functionCall: { name: 'ls', args: {} }, thoughtSignature: 'skip_thought_signature_validator' }],
      },
      {
        role: 'user',
        parts: [{ functionResponse: { name: 'ls', response: { output: CANCELLED_TOOL_OUTPUT } } }],
      },
    ]);
  });

  it('the check refuses arguments that are not a JSON object with a 400 naming the call; blank ones are sent as {}, nameless calls skipped', () => {
    const history = (calls: ChatMessage['tool_calls']): ChatMessage[] => [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: '', tool_calls: calls },
    ];
    for (const text of ['{not json', '[1,2]', '"x"', '3']) {
      const messages = history([
        { id: 'x1', type: 'function', function: { name: 'f', arguments: '{}' } },
        { id: 'x2', type: 'function', function: { name: 'f', arguments: text } },
      ]);
      expect(() => assertCarriedContent(messages, [])).toThrow(
        expect.objectContaining({
          code: 'invalid_request',
          param: 'messages',
          publicMessage: expect.stringMatching(
            /^messages\.1\.tool_calls\.1\.function\.arguments: text that is not a JSON object is not supported by provider_b/,
          ),
        }),
      );
    }
    const passed = history([
      { id: 'x1', type: 'function', function: { name: 'f', arguments: '  ' } },
      { id: 'x3', type: 'function', function: { name: '', arguments: 'not json' } },
    ]);
    expect(() => assertCarriedContent(passed, [])).not.toThrow();
    // A declared custom tool's input is raw text, whatever the wire it was called on.
    const patch = { name: 'apply_patch', type: 'custom', raw: { type: 'custom', custom: { name: 'apply_patch' } } };
    const custom = history([{ id: 'x4', type: 'function', function: { name: 'apply_patch', arguments: '*** Begin' } }]);
    expect(() => assertCarriedContent(custom, [patch])).not.toThrow();
    const built = buildProviderBRequest(chatRequest({ messages: passed }), options);
    expect(built.envelope.request.contents[1].parts.map((part) => part.functionCall)).toEqual([
      { id: 'x1', name: 'f', args: {} },
    ]);
  });

  it('sends each inline image under its own media type and leaves empty texts out, in user and system messages', () => {
    const jpeg = `data:image/jpeg;base64,${Buffer.from([0xff, 0xd8, 0xff, 0xe0]).toString('base64')}`;
    const { envelope } = buildProviderBRequest(
      chatRequest({
        messages: [
          { role: 'system', content: '' },
          { role: 'developer', content: 'Be brief.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: '' },
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url: jpeg } },
            ],
          },
        ],
      }),
      options,
    );
    expect(envelope.request.systemInstruction).toEqual({ role: 'user', parts: [{ text: 'Be brief.' }] });
    expect(envelope.request.contents).toEqual([
      {
        role: 'user',
        parts: [{ text: 'What is this?' }, { inlineData: { mimeType: 'image/jpeg', data: jpeg.split(',')[1] } }],
      },
    ]);
  });

  it('sends the system text as the user turn when no other message has any, else one empty user text', () => {
    const { envelope } = buildProviderBRequest(
      chatRequest({
        messages: [
          { role: 'system', content: 'sys' },
          { role: 'user', content: null },
        ],
      }),
      options,
    );
    expect(envelope.request.contents).toEqual([{ role: 'user', parts: [{ text: 'sys' }] }]);
    expect(envelope.request.systemInstruction).toBeUndefined();
    const empty = buildProviderBRequest(chatRequest({ messages: [{ role: 'user', content: null }] }), options);
    expect(empty.envelope.request.contents).toEqual([{ role: 'user', parts: [{ text: '' }] }]);
    expect(empty.envelope.request.systemInstruction).toBeUndefined();
  });

  describe('tool_choice (docs/upstream/provider-b.md §13.15)', () => {
    const tools: ToolDefinition[] = [{ type: 'function', function: { name: 'x', parameters: { type: 'object' } } }];
    const config = (toolChoice: unknown) =>
      buildProviderBRequest(chatRequest({ tools, toolChoice }), options).envelope.request.toolConfig;

    it.each([
      ['absent', undefined, undefined],
      ['auto', 'auto', { functionCallingConfig: { mode: 'AUTO' } }],
      ['none', 'none', { functionCallingConfig: { mode: 'NONE' } }],
      ['required', 'required', { functionCallingConfig: { mode: 'ANY' } }],
      [
        'forced nested function',
        { type: 'function', function: { name: 'x' } },
        { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['x'] } },
      ],
      [
        'forced flat function',
        { type: 'function', name: 'x' },
        { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['x'] } },
      ],
      [
        'forced custom',
        { type: 'custom', custom: { name: 'x' } },
        { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['x'] } },
      ],
      ['unknown value', 'sometimes', undefined],
    ])('%s', (_label, toolChoice, expected) => {
      expect(config(toolChoice)).toEqual(expected);
    });

    it('sends no toolConfig when there are no declarations', () => {
      expect(
        buildProviderBRequest(chatRequest({ toolChoice: 'required' }), options).envelope.request.toolConfig,
      ).toBeUndefined();
    });
  });

  describe('thought signatures in (docs/upstream/provider-b.md §13.19)', () => {
    const replay = (calls: ChatMessage['tool_calls'], memory: Record<string, string> = {}) =>
      buildProviderBRequest(
        chatRequest({
          messages: [
            { role: 'user', content: 'go' },
            { role: 'assistant', content: null, tool_calls: calls },
          ],
        }),
        {
          ...options,
          signatureFor: (id) => memory[id],
        },
      ).envelope.request.contents[1].parts;

    it('takes the signature from extra_content first, then the process memory', () => {
      const parts = replay(
        [
          { id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } },
          {
            id: 'b',
            type: 'function',
            function: { name: 'f', arguments: '{}' },
            extra_content: { google: { thought_signature: 'sig-b' } },
          },
        ],
        { a: 'sig-1', b: 'stale' },
      );
      expect(parts.map((part) => part.thoughtSignature)).toEqual(['sig-1', 'sig-b']);
    });

    it('puts skip_thought_signature_validator on the first unknown call only', () => {
      const parts = replay([
        { id: 'u1', type: 'function', function: { name: 'f', arguments: '{}' } },
        { id: 'u2', type: 'function', function: { name: 'f', arguments: '{}' } },
      ]);
      expect(parts.map((part) => part.thoughtSignature)).toEqual(['skip_thought_signature_validator', undefined]);
    });
  });

  describe('generationConfig', () => {
    it('omits thinkingConfig for reasoning_effort none, keeps it otherwise (docs/upstream/provider-b.md §13.25)', () => {
      const none = chatRequest({ model: { ...chatRequest().model, reasoningEffort: 'none' } });
      expect(buildProviderBRequest(none, options).envelope.request.generationConfig).toBeUndefined();
      const high = chatRequest({ model: { ...chatRequest().model, reasoningEffort: 'high' } });
      expect(buildProviderBRequest(high, options).envelope.request.generationConfig).toEqual({
        thinkingConfig: { includeThoughts: true },
      });
    });

    it("asks the CLI's Gemini 3 ids for thinkingLevel HIGH, as its chat-base-3 config does, and nothing more", () => {
      const config = (catalogId: string | null, upstreamModel: string, reasoningEffort = 'medium') =>
        buildProviderBRequest(
          chatRequest({ model: { ...chatRequest().model, catalogId, upstreamModel, reasoningEffort } }),
          options,
        ).envelope.request.generationConfig;
      expect(config('gemini-3.5-flash', 'gemini-3-flash')).toEqual({
        thinkingConfig: { includeThoughts: true, thinkingLevel: 'HIGH' },
      });
      expect(config(null, 'gemini-3.1-pro-preview')).toEqual({
        thinkingConfig: { includeThoughts: true, thinkingLevel: 'HIGH' },
      });
      expect(config('gemini-3-pro-preview', 'gemini-3-pro-preview', 'none')).toBeUndefined();
      // Not in the CLI's table: its chat-base config, thoughts alone.
      expect(config(null, 'gemini-3-unknown')).toEqual({ thinkingConfig: { includeThoughts: true } });
    });

    it('forwards temperature, top_p, max tokens and stop sequences only', () => {
      const request = chatRequest({ sampling: { temperature: 0.2, topP: 0.9, maxTokens: 100, stop: ['END'] } });
      expect(buildProviderBRequest(request, options).envelope.request.generationConfig).toEqual({
        thinkingConfig: { includeThoughts: true },
        temperature: 0.2,
        topP: 0.9,
        maxOutputTokens: 100,
        stopSequences: ['END'],
      });
    });

    it("sends a cap above the model's maximum (from its catalog row) as that maximum", () => {
      const request = chatRequest({ sampling: { maxTokens: 200_000 } });
      expect(request.model.maxOutputTokens).toBe(65_536);
      expect(buildProviderBRequest(request, options).envelope.request.generationConfig?.maxOutputTokens).toBe(65_536);
      const unknown = chatRequest({
        model: { ...request.model, maxOutputTokens: undefined },
        sampling: { maxTokens: 200_000 },
      });
      expect(buildProviderBRequest(unknown, options).envelope.request.generationConfig?.maxOutputTokens).toBe(200_000);
    });

    it('forwards seed, and asks for JSON with responseMimeType + responseJsonSchema as Gemini CLI does', () => {
      const schema = {
        type: 'object',
        properties: { city: { type: 'string' } },
        required: ['city'],
        additionalProperties: false,
      };
      const request = chatRequest({
        sampling: { seed: 7 },
        responseFormat: { type: 'json_schema', name: 'city', schema, strict: true },
      });
      expect(buildProviderBRequest(request, options).envelope.request.generationConfig).toEqual({
        thinkingConfig: { includeThoughts: true },
        seed: 7,
        responseMimeType: 'application/json',
        responseJsonSchema: schema,
      });
      const jsonMode = chatRequest({ responseFormat: { type: 'json_object' } });
      expect(buildProviderBRequest(jsonMode, options).envelope.request.generationConfig).toEqual({
        thinkingConfig: { includeThoughts: true },
        responseMimeType: 'application/json',
      });
    });
  });

  describe('session ids (docs/upstream/provider-b.md §13.26)', () => {
    it('is a stable UUID per chat key and differs between chats', () => {
      const first = buildProviderBRequest(chatRequest({ conversationId: 'chat:a' }), {
        ...options,
        userPromptId: 'r1',
      }).envelope;
      const second = buildProviderBRequest(chatRequest({ conversationId: 'chat:a' }), {
        ...options,
        userPromptId: 'r2',
      }).envelope;
      const other = buildProviderBRequest(chatRequest({ conversationId: 'chat:b' }), options).envelope;
      expect(first.request.session_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(second.request.session_id).toBe(first.request.session_id);
      expect(other.request.session_id).not.toBe(first.request.session_id);
      expect(first.user_prompt_id).not.toBe(second.user_prompt_id);
    });
  });
});
