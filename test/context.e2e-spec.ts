import type { TestGateway } from './support/create-test-app';
import { startGateway } from './support/create-test-app';
import { providerASettings, textReply } from './support/provider-a-fixtures';
import { useFakeProviderA } from './support/provider-a-harness';
import { postChatBody } from './support/chat-sse';

/**
 * Context management over HTTP (docs/design/behaviours.md §5, §10 items 30–34): what reaches the
 * provider_a fake after the gateway capped and compacted the history, and the one
 * `context_manage` log record.
 */
jest.setTimeout(20_000);

const TOOLS = [
  {
    type: 'function',
    function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
  },
];
const TRUNCATED_40000 = '[gateway: tool output truncated from 40000 bytes; kept 32699 bytes]';

type Message = Record<string, unknown>;
type InputItem = { type: string; call_id?: string; output?: string; role?: string; content?: unknown };

/** system, user, `pairs` × (assistant call, tool result of `resultBytes`), final user message. */
function agentHistory(pairs: number, resultBytes: number, marker = 'chunk'): Message[] {
  const messages: Message[] = [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'Fix the failing build.' },
  ];
  for (let index = 0; index < pairs; index++) {
    const id = `call_${index}`;
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id, type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ path: `f${index}.ts` }) } },
      ],
    });
    const head = `${marker}-${index}:`;
    messages.push({
      role: 'tool',
      tool_call_id: id,
      content: head + 'r'.repeat(Math.max(0, resultBytes - head.length)),
    });
  }
  messages.push({ role: 'user', content: 'Continue.' });
  return messages;
}

describe('context management (POST /v1/chat/completions → provider_a)', () => {
  const gateways: TestGateway[] = [];
  // Registered before the fake's hooks so the gateways stop before the fake does.
  afterAll(async () => {
    for (const gateway of gateways) await gateway.close();
  });
  const { fake, home } = useFakeProviderA({ homePrefix: 'context-e2e-' });

  async function gatewayWith(settings: Record<string, string> = {}): Promise<TestGateway> {
    const gateway = await startGateway({
      ...providerASettings(fake(), home()),
      GATEWAY_PROVIDERS: 'provider_a',
      ...settings,
    });
    gateways.push(gateway);
    return gateway;
  }

  let defaults: TestGateway;
  beforeAll(async () => {
    defaults = await gatewayWith();
  });

  /** Sends one chat turn and returns the upstream body's `input` items. */
  async function send(
    gateway: TestGateway,
    body: Record<string, unknown>,
  ): Promise<{ input: InputItem[]; requestId: string }> {
    fake().enqueue(textReply('ok'));
    const response = await postChatBody(gateway, { model: 'gpt-5.6-sol', ...body });
    expect(response.status).toBe(200);
    await response.text();
    const upstream = fake().lastBody();
    expect(upstream).toMatchObject({ model: 'gpt-5.6-sol', input: expect.any(Array) });
    return { input: upstream!.input as InputItem[], requestId: response.headers.get('x-request-id') ?? '' };
  }

  const outputs = (input: InputItem[]) => input.filter((item) => item.type === 'function_call_output');
  const contextRecords = (gateway: TestGateway, requestId: string) =>
    gateway.logs.records('context_manage').filter((record) => record.reqId === requestId);

  it('sends a 40 000-byte tool result as 32 768 bytes ending in the truncation marker (item 30)', async () => {
    const messages = agentHistory(1, 40_000);
    const { input, requestId } = await send(defaults, { tools: TOOLS, messages });
    const [output] = outputs(input);
    expect(Buffer.byteLength(output.output!, 'utf8')).toBe(32_768);
    expect(output.output!.endsWith(`\n\n${TRUNCATED_40000}`)).toBe(true);
    expect(output.output!.startsWith('chunk-0:rrr')).toBe(true);
    expect(contextRecords(defaults, requestId)).toEqual([
      expect.objectContaining({
        event: 'context_manage',
        messages: 5,
        tool_messages: 1,
        truncated: 1,
        compacted: 0,
        recent_kept: 0,
      }),
    ]);
  });

  it('compacts tool results before the boundary of 130 messages (the last 24 and up to 11 more kept) and keeps every pair', async () => {
    const messages = agentHistory(63, 2_000);
    messages.push({ role: 'user', content: 'Really continue.' });
    expect(messages).toHaveLength(130);
    const { input, requestId } = await send(defaults, { tools: TOOLS, messages });

    // Every call still has its output, in the same order, with the same ids.
    const calls = input.filter((item) => item.type === 'function_call').map((item) => item.call_id);
    expect(calls).toEqual(
      messages.filter((message) => message.role === 'assistant').map((_, index) => `call_${index}`),
    );
    expect(outputs(input).map((item) => item.call_id)).toEqual(calls);
    const types = input.map((item) => item.type);
    calls.forEach((id) =>
      expect(types[input.findIndex((item) => item.type === 'function_call_output' && item.call_id === id) - 1]).toBe(
        'function_call',
      ),
    );

    // Tool messages at index ≥ 96 (the boundary: 24 messages, moved in steps of 12) are untouched; older ones are compacted.
    const tailStart = 96;
    outputs(input).forEach((item, index) => {
      const messageIndex = 3 + index * 2;
      const original = messages[messageIndex].content as string;
      if (messageIndex >= tailStart) {
        expect(item.output).toBe(original);
      } else {
        expect(item.output).toBe(
          original.slice(0, 512) + '\n\n[gateway: older tool output compacted from 2000 bytes; kept 512 bytes]',
        );
      }
    });
    const [record] = contextRecords(defaults, requestId);
    expect(record).toMatchObject({ messages: 130, tool_messages: 63, truncated: 0, compacted: 47, recent_kept: 34 });
    // The tool results' text as sent and as forwarded (docs/queue-and-context.md "Log").
    const forwarded = outputs(input).reduce((sum, item) => sum + Buffer.byteLength(item.output!, 'utf8'), 0);
    expect(record).toMatchObject({ bytes_before: 63 * 2_000, bytes_after: forwarded });
  });

  it('leaves a small old tool result alone (item 33)', async () => {
    const messages = agentHistory(70, 3_000);
    messages[3] = { role: 'tool', tool_call_id: 'call_0', content: 'tiny result' };
    const { input } = await send(defaults, { tools: TOOLS, messages });
    expect(outputs(input)[0].output).toBe('tiny result');
    expect(outputs(input)[1].output).toMatch(/compacted from 3000 bytes; kept 512 bytes\]$/);
  });

  it('logs context_manage with counts only, and nothing for a plain chat or an unchanged history (item 34)', async () => {
    const secret = 'SECRET-TOOL-OUTPUT-5c1e';
    const changed = await send(defaults, { tools: TOOLS, messages: agentHistory(1, 40_000, secret) });
    const [record] = contextRecords(defaults, changed.requestId);
    const counts = [
      'messages',
      'bytes_before',
      'bytes_after',
      'tool_messages',
      'truncated',
      'compacted',
      'recent_kept',
    ];
    const pinoFields = ['level', 'time', 'pid', 'hostname', 'reqId', 'event', 'msg'];
    expect(Object.keys(record).sort()).toEqual([...counts, ...pinoFields].sort());
    counts.forEach((key) => expect(typeof record[key]).toBe('number'));
    expect(defaults.logs.text).not.toContain(secret);

    const plain = await send(defaults, { messages: [{ role: 'user', content: 'x'.repeat(50_000) }] });
    expect(contextRecords(defaults, plain.requestId)).toEqual([]);
    const small = await send(defaults, { tools: TOOLS, messages: agentHistory(3, 100) });
    expect(contextRecords(defaults, small.requestId)).toEqual([]);
  });

  it('never touches a request without tools, even with a huge tool result in its history', async () => {
    const messages = agentHistory(1, 40_000);
    const { input, requestId } = await send(defaults, { messages });
    expect(Buffer.byteLength(outputs(input)[0].output!, 'utf8')).toBe(40_000);
    expect(contextRecords(defaults, requestId)).toEqual([]);
  });

  it('sends everything as received with PRIMARY_CONTEXT_MANAGEMENT_ENABLED=false', async () => {
    const off = await gatewayWith({ PRIMARY_CONTEXT_MANAGEMENT_ENABLED: 'false' });
    const messages = agentHistory(63, 2_000);
    messages[3] = { ...messages[3], content: 'z'.repeat(40_000) };
    const { input, requestId } = await send(off, { tools: TOOLS, messages });
    outputs(input).forEach((item, index) => expect(item.output).toBe(messages[3 + index * 2].content));
    expect(contextRecords(off, requestId)).toEqual([]);
  });

  it('applies the PRIMARY_CONTEXT_MANAGEMENT_* sizes from the settings', async () => {
    const tuned = await gatewayWith({
      PRIMARY_CONTEXT_MANAGEMENT_MAX_MESSAGES: '10',
      PRIMARY_CONTEXT_MANAGEMENT_MAX_BYTES: '0',
      PRIMARY_CONTEXT_MANAGEMENT_RECENT_MESSAGES: '4',
      PRIMARY_CONTEXT_MANAGEMENT_TOOL_OUTPUT_MAX_BYTES: '1000',
      PRIMARY_CONTEXT_MANAGEMENT_COMPACTED_TOOL_OUTPUT_BYTES: '100',
    });
    const messages = agentHistory(6, 800); // 15 messages > 10; tool results at index 3, 5, …, 13
    messages[13] = { ...messages[13], content: 'q'.repeat(5_000) }; // the newest tool result, inside the tail
    const { input, requestId } = await send(tuned, { tools: TOOLS, messages });
    const sent = outputs(input).map((item) => item.output!);
    // Tool results at index 3, 5, 7, 9 lie before the boundary (10: the last 4 messages, moved in steps of 2): compacted to 100 bytes.
    sent
      .slice(0, 4)
      .forEach((text, index) =>
        expect(text).toBe(
          `chunk-${index}:`.padEnd(100, 'r') +
            '\n\n[gateway: older tool output compacted from 800 bytes; kept 100 bytes]',
        ),
      );
    // In the tail: index 11 is untouched, index 13 is only capped at 1000 bytes.
    expect(sent[4]).toBe(messages[11].content);
    expect(Buffer.byteLength(sent[5], 'utf8')).toBe(1000);
    expect(sent[5]).toMatch(/^q+\n\n\[gateway: tool output truncated from 5000 bytes; kept 934 bytes\]$/);
    expect(contextRecords(tuned, requestId)).toEqual([
      expect.objectContaining({ truncated: 1, compacted: 4, recent_kept: 5, messages: 15 }),
    ]);
  });
});
