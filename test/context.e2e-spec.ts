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
const IMAGE_OMITTED = '[gateway: image of older tool output omitted]';
const PIXEL =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

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

  it('keeps the images of the newest tool result over the cap, in their place, and cuts only its text (item 30)', async () => {
    // A browser agent's result: a page title, its screenshot, a 40 000-byte accessibility tree, a second screenshot.
    const secondShot = 'data:image/png;base64,' + 'B'.repeat(64);
    const messages = agentHistory(1, 10);
    messages[3] = {
      role: 'tool',
      tool_call_id: 'call_0',
      content: [
        { type: 'text', text: 'page 1' },
        { type: 'image_url', image_url: { url: PIXEL } },
        { type: 'text', text: 'a11y tree '.repeat(3_999) + 'end' }, // 39 993 bytes: 40 000 with 'page 1' and a newline
        { type: 'image_url', image_url: { url: secondShot, detail: 'low' } },
      ],
    };
    const { input, requestId } = await send(defaults, { tools: TOOLS, messages });
    const parts = outputs(input)[0].output as unknown as Array<{ type: string; text?: string }>;
    expect(parts.map((part) => part.type)).toEqual(['input_text', 'input_image', 'input_text', 'input_image']);
    expect(parts[0]).toEqual({ type: 'input_text', text: 'page 1' });
    expect(parts[1]).toEqual({ type: 'input_image', image_url: PIXEL });
    expect(parts[3]).toEqual({ type: 'input_image', image_url: secondShot, detail: 'low' });
    // The text parts, joined as every family reads them, are the 40 000 bytes cut to the cap.
    const text = `${parts[0].text}\n${parts[2].text}`;
    expect(Buffer.byteLength(text, 'utf8')).toBe(32_768);
    expect(text.endsWith(`\n\n${TRUNCATED_40000}`)).toBe(true);
    expect(parts[2].text!.startsWith('a11y tree a11y tree')).toBe(true);
    const [record] = contextRecords(defaults, requestId);
    expect(record).toMatchObject({ truncated: 1, compacted: 0, images_omitted: 0 });
    // The images count on both sides: only the text shrank.
    expect(Number(record.bytes_before) - Number(record.bytes_after)).toBe(40_000 - 32_768);
  });

  it('replaces the screenshots of tool results before the boundary with a marker, keeps the tail as sent, and does it the same way every turn', async () => {
    // A computer-use agent: 70 screenshot results of 4 bytes of text and a 20 kB image; 141 messages.
    const screenshot = 'data:image/png;base64,' + 'A'.repeat(20_000);
    const messages: Message[] = [{ role: 'user', content: 'Book the flight.' }];
    for (let index = 0; index < 70; index++) {
      messages.push({
        role: 'assistant',
        content: null,
        tool_calls: [{ id: `call_${index}`, type: 'function', function: { name: 'read_file', arguments: '{}' } }],
      });
      messages.push({
        role: 'tool',
        tool_call_id: `call_${index}`,
        content: [
          { type: 'text', text: 'shot' },
          { type: 'image_url', image_url: { url: screenshot } },
        ],
      });
    }
    const first = await send(defaults, { tools: TOOLS, messages });
    // The boundary of 141 messages is 108 (the last 24 and 9 more): results 0–52 lie before it.
    outputs(first.input).forEach((item, index) => {
      if (index <= 52) expect(item.output).toBe(`shot\n${IMAGE_OMITTED}`);
      else
        expect(item.output).toEqual([
          { type: 'input_text', text: 'shot' },
          { type: 'input_image', image_url: screenshot },
        ]);
    });
    const imageBytes = Buffer.byteLength(screenshot, 'utf8');
    expect(contextRecords(defaults, first.requestId)).toEqual([
      expect.objectContaining({
        messages: 141,
        tool_messages: 70,
        truncated: 0,
        compacted: 53,
        images_omitted: 53,
        recent_kept: 33,
        bytes_before: 70 * (4 + imageBytes),
        bytes_after: 53 * Buffer.byteLength(`shot\n${IMAGE_OMITTED}`, 'utf8') + 17 * (4 + imageBytes),
      }),
    ]);
    // The same history again goes up byte for byte the same (the upstream's prompt cache keys on it).
    const second = await send(defaults, { tools: TOOLS, messages });
    expect(JSON.stringify(second.input)).toBe(JSON.stringify(first.input));
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
      'images_omitted',
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
