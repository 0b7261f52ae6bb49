import { LITE_HEADER, LITE_METADATA_KEY, toLiteShape, wireShapeFor } from './provider-a.wire';

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
