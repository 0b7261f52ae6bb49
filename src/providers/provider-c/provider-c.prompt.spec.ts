import type { ChatMessage, ToolDefinition } from '../../core/chat-message';
import type { GatewayError } from '../../core/gateway.error';
import { normalizeTools } from '../../chat/chat-tools';
import { CANCELLED_TOOL_OUTPUT } from '../shared/tool-pairing';
import { assertTextOnlyConversation, renderProviderCPrompt } from './provider-c.prompt';
import { CLOSING_REMINDER, planToolChoice, renderToolsJson } from './provider-c.protocol';

const READ_FILE_SCHEMA = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
const READ_FILE: ToolDefinition = {
  type: 'function',
  function: { name: 'read_file', description: 'Read a file', parameters: READ_FILE_SCHEMA },
};
const APPLY_PATCH: ToolDefinition = {
  type: 'custom',
  custom: { name: 'apply_patch', description: 'Apply a patch', format: { type: 'grammar' } },
};
const FLAT_LS: ToolDefinition = { name: 'ls', parameters: { type: 'object', properties: {} } };

function render(messages: ChatMessage[], tools: ToolDefinition[] = [], toolChoice?: unknown): string {
  const normalized = normalizeTools(tools);
  return renderProviderCPrompt(messages, normalized, planToolChoice(toolChoice, normalized)).text;
}

describe(renderProviderCPrompt.name, () => {
  it('renders a plain chat without any protocol (docs/upstream/provider-c.md §4)', () => {
    const prompt = render([
      { role: 'system', content: 'Be brief.' },
      {
        role: 'developer',
        content: [
          { type: 'text', text: 'Dev A' },
          { type: 'image_url', image_url: 'x' },
          { type: 'text', text: 'Dev B' },
        ],
      },
      { role: 'user', content: 'Hi' },
    ]);
    expect(prompt).toBe('System:\nBe brief.\n\nSystem:\nDev A\nDev B\n\nUser:\nHi\n');
    expect(prompt).not.toContain('agent_tool_call');
  });

  it('renders history calls as protocol blocks and results once under the tool name (docs/upstream/provider-c.md §4 example)', () => {
    const prompt = render(
      [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'What is the package name?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"package.json"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '{"name": "demo-app", "version": "1.0.0"}' },
        { role: 'tool', tool_call_id: 'call_unknown', content: 'orphan' },
      ],
      [READ_FILE],
    );
    const transcript = prompt.slice(prompt.indexOf('System:\nBe brief.'));
    expect(transcript).toBe(
      [
        'System:\nBe brief.',
        'User:\nWhat is the package name?',
        'Assistant:\n```agent_tool_call\n{"name":"read_file","arguments":{"path":"package.json"}}\n```',
        'Tool result (read_file):\n{"name": "demo-app", "version": "1.0.0"}',
        CLOSING_REMINDER,
      ].join('\n\n') + '\n',
    );
    expect(prompt.split('demo-app')).toHaveLength(2);
    expect(prompt).not.toContain('call_1');
    // A result answering no call in the history is left out, as provider_b does.
    expect(prompt).not.toContain('orphan');
  });

  it('renders results right after their calls in call order, whatever order the client sent them in', () => {
    const call = (id: string, name: string, args: string) => ({
      id,
      type: 'function',
      function: { name, arguments: args },
    });
    const { text, cancelledCalls, orphanResults } = renderProviderCPrompt(
      [
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            call('c1', 'read_file', '{"path":"a.ts"}'),
            call('c2', 'read_file', '{"path":"b.ts"}'),
            call('c3', 'run', '{"cmd":"touch x"}'),
          ],
        },
        { role: 'tool', tool_call_id: 'c2', content: 'CONTENT-OF-B' },
        { role: 'tool', tool_call_id: 'c9', content: 'STRAY' },
        { role: 'tool', tool_call_id: 'c1', content: 'CONTENT-OF-A' },
        { role: 'user', content: 'Go on' },
      ],
      normalizeTools([READ_FILE]),
      { callsAllowed: false },
    );
    expect(text).toBe(
      [
        'Assistant:\n```agent_tool_call\n{"name":"read_file","arguments":{"path":"a.ts"}}\n```\n' +
          '```agent_tool_call\n{"name":"read_file","arguments":{"path":"b.ts"}}\n```\n' +
          '```agent_tool_call\n{"name":"run","arguments":{"cmd":"touch x"}}\n```',
        'Tool result (read_file):\nCONTENT-OF-A',
        'Tool result (read_file):\nCONTENT-OF-B',
        `Tool result (run):\n${CANCELLED_TOOL_OUTPUT}`,
        'User:\nGo on',
      ].join('\n\n') + '\n',
    );
    expect({ cancelledCalls, orphanResults }).toEqual({ cancelledCalls: 1, orphanResults: 1 });
  });

  it('renders an empty tool result as "(no output)", so its call stays answered', () => {
    const prompt = render(
      [
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'ls', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: '' },
      ],
      [FLAT_LS],
    );
    expect(prompt).toContain('```\n\nTool result (ls):\n(no output)\n\n');
    expect(prompt).not.toContain(CANCELLED_TOOL_OUTPUT);
  });

  it('renders assistant text before its calls, custom calls with a string input, and skips empty messages', () => {
    const prompt = render(
      [
        { role: 'system', content: '' },
        { role: 'developer', content: [] },
        { role: 'user', content: '' },
        {
          role: 'assistant',
          content: 'Patching.',
          tool_calls: [
            { id: 'c1', type: 'custom', custom: { name: 'apply_patch', input: '*** Begin Patch\n*** End Patch' } },
          ],
        },
        { role: 'assistant', content: '' },
      ],
      [APPLY_PATCH],
    );
    expect(prompt).toContain(
      'Assistant:\nPatching.\n```agent_tool_call\n{"name":"apply_patch","arguments":"*** Begin Patch\\n*** End Patch"}\n```',
    );
    expect(prompt).not.toContain('User:');
    expect(prompt).not.toContain('System:');
    expect(prompt.match(/Assistant:/g)).toHaveLength(1);
  });

  it('renders an empty transcript as "Continue."', () => {
    expect(render([])).toBe('Continue.\n');
  });

  it('starts with the protocol block listing every tool and ends with the reminder (docs/upstream/provider-c.md §5)', () => {
    const prompt = render([{ role: 'user', content: 'Go' }], [READ_FILE, APPLY_PATCH, FLAT_LS]);
    expect(prompt.startsWith('## Tools\n')).toBe(true);
    expect(prompt).toContain('you\ncannot run commands, read files or use the network yourself');
    expect(prompt).toContain('```agent_tool_call\n{"name": "TOOL_NAME", "arguments": {"example": "value"}}\n```');
    const toolsLine = prompt.split('\n').find((line) => line.startsWith('[{'));
    expect(JSON.parse(toolsLine!)).toEqual([
      { name: 'read_file', type: 'function', description: 'Read a file', parameters: READ_FILE_SCHEMA },
      { name: 'apply_patch', type: 'custom', description: 'Apply a patch', format: { type: 'grammar' } },
      { name: 'ls', type: 'function', parameters: { type: 'object', properties: {} } },
    ]);
    expect(prompt.endsWith(`User:\nGo\n\n${CLOSING_REMINDER}\n`)).toBe(true);
    expect(prompt).not.toContain('This reply must');
  });

  it('tool_choice "none": no protocol block and no reminder, history calls still rendered', () => {
    const prompt = render(
      [
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'a', type: 'function', function: { name: 'ls', arguments: '' } }],
        },
        { role: 'tool', tool_call_id: 'a', content: 'x.ts' },
      ],
      [FLAT_LS],
      'none',
    );
    expect(prompt).toBe(
      'Assistant:\n```agent_tool_call\n{"name":"ls","arguments":{}}\n```\n\nTool result (ls):\nx.ts\n',
    );
  });

  it('tool_choice "required" adds the must-call rule line', () => {
    expect(render([{ role: 'user', content: 'x' }], [READ_FILE], 'required')).toContain(
      '\n- This reply must contain at least one agent_tool_call block.\n',
    );
  });

  it.each([
    [{ type: 'function', function: { name: 'read_file' } }, 'read_file'],
    [{ type: 'custom', custom: { name: 'apply_patch' } }, 'apply_patch'],
    [{ type: 'function', name: 'ls' }, 'ls'],
  ])('a forced tool %j adds the must-call-X rule', (choice, name) => {
    expect(render([{ role: 'user', content: 'x' }], [READ_FILE, APPLY_PATCH, FLAT_LS], choice)).toContain(
      `\n- This reply must call the tool "${name}".\n`,
    );
  });

  it('"auto" and parallel_tool_calls add no rule', () => {
    const prompt = render([{ role: 'user', content: 'x' }], [READ_FILE], 'auto');
    expect(prompt).not.toContain('This reply must');
    expect(prompt).toContain('- If the request does not need a tool, just answer.\n\nAvailable tools (JSON):\n[');
  });
});

describe(assertTextOnlyConversation.name, () => {
  /** The 400's message for a conversation whose second user part is `part`. */
  function refusal(part: unknown): string | undefined {
    try {
      assertTextOnlyConversation([{ role: 'user', content: [{ type: 'text', text: 'Look' }, part] } as ChatMessage]);
      return undefined;
    } catch (error) {
      expect(error).toMatchObject({ code: 'invalid_request', param: 'messages' });
      return (error as GatewayError).publicMessage;
    }
  }

  it('refuses an image with the fix for images: describe it, or choose a family that takes images', () => {
    expect(refusal({ type: 'image_url', image_url: { url: 'https://example.test/cat.png' } })).toBe(
      'messages[0].content[1]: part type "image_url" is not supported by provider_c (Claude Code takes the conversation as text); describe the image in a text part, or choose a model of a family that takes images (provider_a, provider_b)',
    );
  });

  it("refuses any other part with its own type's fix", () => {
    expect(refusal({ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } })).toMatch(
      /part type "input_audio" is not supported by provider_c .*; send its transcript as a text part \(no family takes audio\)$/,
    );
  });

  it('lets a text-only conversation through', () => {
    expect(refusal({ type: 'text', text: 'more' })).toBeUndefined();
  });
});

describe(planToolChoice.name, () => {
  it('allows no call without tools or with "none", and calls otherwise', () => {
    expect(planToolChoice(undefined, [])).toEqual({ callsAllowed: false });
    expect(planToolChoice('none', normalizeTools([READ_FILE]))).toEqual({ callsAllowed: false });
    expect(planToolChoice('auto', normalizeTools([READ_FILE]))).toEqual({ callsAllowed: true });
    expect(
      planToolChoice(undefined, normalizeTools([{ type: 'function', function: { description: 'nameless' } }]))
        .callsAllowed,
    ).toBe(false);
  });
});

describe(renderToolsJson.name, () => {
  it('keeps the client schema unmodified, key order name/type/description/parameters', () => {
    const schema = {
      type: 'object',
      required: ['b', 'a'],
      properties: { b: { type: 'string' }, a: { type: 'number' } },
      additionalProperties: false,
    };
    const json = renderToolsJson(
      normalizeTools([{ type: 'function', function: { name: 'f', description: 'd', parameters: schema } }]),
    );
    expect(json).toBe(`[{"name":"f","type":"function","description":"d","parameters":${JSON.stringify(schema)}}]`);
  });

  it('renders a tool whose type is null or not a string as a function tool, as the body rules read it', () => {
    const json = renderToolsJson(
      normalizeTools([
        { type: null, function: { name: 'nested_null' } },
        { type: 5, name: 'flat_number' },
      ]),
    );
    expect(json).toBe('[{"name":"nested_null","type":"function"},{"name":"flat_number","type":"function"}]');
  });
});
