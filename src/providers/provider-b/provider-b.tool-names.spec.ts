import fc from 'fast-check';
import type { ChatMessage, ToolDefinition } from '../../core/chat-message';
import { providerBChatRequest as chatRequest } from '../../../test/support/provider-b-fixtures';
import { buildToolNameMap } from '../shared/tool-names';
import { buildProviderBRequest } from './provider-b.request';
import { createProviderBStreamState, translateProviderBPayload } from './provider-b.stream';
import { GEMINI_TOOL_NAMES } from './provider-b.tool-names';

const options = { project: 'proj-1', userPromptId: 'req-1' };
const LONG_MCP = `mcp__${'x'.repeat(70)}__tool`;
const NAMES = ['read.file', LONG_MCP, 'github/create issue', 'github create/issue', '1password_lookup', 'ns:tool-1'];

describe('provider_b tool names', () => {
  it("round-trips any set of client names through names Gemini's rule accepts (property)", () => {
    const name = fc.oneof(
      fc.string({ minLength: 0, maxLength: 120 }),
      fc.stringMatching(/^[a-zA-Z0-9_.:/ -]{1,80}$/),
      fc
        .tuple(fc.stringMatching(/^[a-z0-9_-]{1,40}$/), fc.stringMatching(/^[a-z_.]{1,60}$/))
        .map(([server, tool]) => `mcp__${server}__${tool}`),
    );
    fc.assert(
      fc.property(fc.uniqueArray(name, { maxLength: 30 }), (names) => {
        const map = buildToolNameMap(names, GEMINI_TOOL_NAMES);
        const upstream = names.map((entry) => map.toUpstream(entry));
        for (const entry of upstream) expect(entry).toMatch(/^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/);
        expect(new Set(upstream).size).toBe(names.length);
        for (const entry of names) expect(map.toClient(map.toUpstream(entry))).toBe(entry);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps names Gemini accepts (dots and colons too) and renames the others', () => {
    const map = buildToolNameMap(NAMES, GEMINI_TOOL_NAMES);
    expect(map.toUpstream('read.file')).toBe('read.file');
    expect(map.toUpstream('ns:tool-1')).toBe('ns:tool-1');
    expect(map.toUpstream(LONG_MCP)).toMatch(/^mcp__x+__tool_[0-9a-f]{8}$/);
    expect(map.toUpstream(LONG_MCP)).toHaveLength(64);
    expect(map.toUpstream('1password_lookup')).toMatch(/^_1password_lookup_[0-9a-f]{8}$/);
    expect(map.toUpstream('github/create issue')).toMatch(/^github_create_issue_[0-9a-f]{8}$/);
    expect(map.toUpstream('github create/issue')).not.toBe(map.toUpstream('github/create issue'));
    expect(map.renamed).toBe(4);
  });

  it('renames declarations, allowedFunctionNames, history calls and results alike, and maps returned calls back', () => {
    const tools: ToolDefinition[] = [
      ...NAMES.map((name) => ({ type: 'function', function: { name } })),
      { type: 'custom', custom: { name: 'apply patch' } },
    ];
    const calls = [...NAMES, 'apply patch'].map((name, index) => ({
      id: `call_${index}`,
      type: 'function',
      function: { name, arguments: '{}' },
    }));
    const messages: ChatMessage[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: calls },
      ...calls.map((call): ChatMessage => ({ role: 'tool', tool_call_id: call.id, content: 'done' })),
    ];
    const toolChoice = { type: 'function', function: { name: 'github/create issue' } };
    const built = buildProviderBRequest(chatRequest({ tools, messages, toolChoice }), options);
    const { request } = built.envelope;
    const declared = request.tools![0].functionDeclarations.map((declaration) => declaration.name);
    const [, model, results] = request.contents;
    expect(model.parts.map((part) => part.functionCall?.name)).toEqual(declared);
    expect(results.parts.map((part) => part.functionResponse?.name)).toEqual(declared);
    expect(request.toolConfig?.functionCallingConfig.allowedFunctionNames).toEqual([declared[2]]);
    for (const name of declared) expect(name).toMatch(GEMINI_TOOL_NAMES.valid);
    expect(built.report.renamedToolNames).toBe(5);

    const state = createProviderBStreamState(built.customToolNames, built.toolNames, 'req-1');
    const step = translateProviderBPayload(
      {
        response: {
          candidates: [
            {
              content: {
                role: 'model',
                parts: [
                  { functionCall: { name: declared[2], args: { title: 't' } } },
                  { functionCall: { name: declared[6], args: { input: 'patch' } } },
                ],
              },
            },
          ],
        },
      },
      state,
    );
    expect(step.events).toEqual([
      { type: 'tool-call', call: expect.objectContaining({ name: 'github/create issue', kind: 'function' }) },
      { type: 'tool-call', call: expect.objectContaining({ name: 'apply patch', kind: 'custom', input: 'patch' }) },
    ]);
  });

  it('leaves a request whose names are all valid as it is', () => {
    const tools: ToolDefinition[] = [{ type: 'function', function: { name: 'read_file' } }];
    const built = buildProviderBRequest(chatRequest({ tools }), options);
    expect(built.envelope.request.tools![0].functionDeclarations[0].name).toBe('read_file');
    expect(built.toolNames.renamed).toBe(0);
  });
});
