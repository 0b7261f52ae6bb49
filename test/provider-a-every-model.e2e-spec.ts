import * as path from 'node:path';
import { useGateway } from './support/create-test-app';
import type { FakeFrame } from './support/fake-provider-a';
import { completed, created, functionCallItem, providerASettings, textDelta } from './support/provider-a-fixtures';
import { useFakeProviderA } from './support/provider-a-harness';
import { postChatBody } from './support/chat-sse';

type Json = Record<string, any>;

/**
 * Every listed model works: against a fake that refuses what the real backend refuses (unknown
 * models, efforts outside the model's wire set such as "ultra", mixed lite shapes), every
 * provider_a id `/v1/models` lists answers 200 for a text turn, and for a tool turn and its
 * continuation, over WebSocket and over HTTP + SSE.
 */
describe('every listed provider_a id works against a backend that refuses what the real one refuses', () => {
  const { fake, home } = useFakeProviderA({ homePrefix: 'pa-every-' });
  let counter = 0;

  /** A tool call when the request offers tools and carries no tool output yet; else text. */
  const answer = (body: Json): FakeFrame[] => {
    const id = `resp_every_${++counter}`;
    const input = (body.input ?? []) as Json[];
    const lite = input.some((item) => item.type === 'additional_tools');
    const offersTools = lite || Array.isArray(body.tools);
    const answered = input.some((item) => item.type === 'function_call_output');
    const model = String(body.model);
    if (offersTools && !answered)
      return [
        created(id, model),
        ...functionCallItem(`call_${counter}`, 'read_file', '{"path":"a.ts"}'),
        completed(undefined, id, model),
      ];
    return [created(id, model), textDelta('ok'), completed(undefined, id, model)];
  };

  const TOOLS = [
    {
      type: 'function',
      function: {
        name: 'read_file',
        description: 'Reads a file.',
        parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      },
    },
  ];

  describe.each(['ws', 'sse'] as const)('over %s', (transport) => {
    const gateway = useGateway(() => ({
      ...providerASettings(fake(), path.join(home(), transport), { transport }),
      GATEWAY_PROVIDERS: 'provider_a',
    }));
    beforeEach(() => {
      fake().keepConnectionsOpen();
      fake().respondWith(answer);
    });

    const chat = (model: string, conversation: string, body: Json) =>
      postChatBody(gateway, { model, ...body }, { headers: { 'x-conversation-id': conversation } });

    it('text turn, tool turn and continuation: 200 for every id, no request refused upstream', async () => {
      const models = (((await (await fetch(`${gateway.url}/v1/models`)).json()) as Json).data as Json[]).filter(
        (entry) => entry.owned_by === 'provider_a',
      );
      expect(models.length).toBeGreaterThan(50);
      const failures: string[] = [];
      for (const { id } of models) {
        const text = await chat(id, `${transport}-${id}-text`, {
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: 'hi' },
          ],
        });
        if (text.status !== 200) failures.push(`${id} text ${text.status}`);
        await text.text();
        const messages = [{ role: 'user', content: 'read a.ts' }];
        const toolTurn = await chat(id, `${transport}-${id}-tool`, {
          messages,
          tools: TOOLS,
          parallel_tool_calls: true,
        });
        const toolBody = (await toolTurn.json()) as Json;
        const call = toolBody.choices?.[0]?.message?.tool_calls?.[0];
        if (toolTurn.status !== 200 || !call) {
          failures.push(`${id} tool ${toolTurn.status}`);
          continue;
        }
        const continuation = await chat(id, `${transport}-${id}-tool`, {
          messages: [
            ...messages,
            { role: 'assistant', content: null, tool_calls: [call] },
            { role: 'tool', tool_call_id: call.id, content: 'export {}' },
          ],
          tools: TOOLS,
        });
        if (continuation.status !== 200) failures.push(`${id} continuation ${continuation.status}`);
        await continuation.text();
      }
      expect(failures).toEqual([]);
      expect(
        fake()
          .requests()
          .filter((request) => request.violation)
          .map((request) => request.violation),
      ).toEqual([]);
    });
  });
});
