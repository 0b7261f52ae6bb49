import type { TestGateway } from './support/create-test-app';
import { startGateway } from './support/create-test-app';
import { cliModelList } from './support/fake-provider-a';
import { providerASettings, textDelta, created, completed } from './support/provider-a-fixtures';
import { useFakeProviderA } from './support/provider-a-harness';
import { codexClient } from '../src/providers/provider-a/provider-a.client';
import { pollUntil } from './support/poll';
import { postChatBody } from './support/chat-sse';

type Json = Record<string, any>;

/**
 * Compressed answers (docs/providers.md "Compressed answers"): the gateway accepts what the
 * running Node's fetch decodes, and a backend that then compresses the model list and the SSE
 * stream is read as if it had not.
 */
describe('provider_a reads compressed model lists and SSE streams', () => {
  const { fake, home } = useFakeProviderA({ homePrefix: 'pa-compression-' });
  let gateway: TestGateway;
  afterEach(() => gateway?.close());

  // The gateway runs on Node 24 or newer (docs/deployment.md "Runtime"), whose fetch decodes both.
  it.each(['gzip', 'zstd'] as const)(
    'a %s model list is merged, and the same coding on the SSE stream answers streaming and non-streaming chats',
    async (coding) => {
      expect(codexClient().acceptEncoding.split(',')).toContain(coding);
      fake().compressAnswers(coding);
      fake().serveModels([
        ...cliModelList(),
        {
          slug: 'gpt-7-sol',
          visibility: 'list',
          supported_reasoning_levels: [{ effort: 'low' }],
          default_reasoning_level: 'low',
          service_tiers: [],
          use_responses_lite: true,
        },
      ]);
      gateway = await startGateway({
        ...providerASettings(fake(), home(), { transport: 'sse' }),
        GATEWAY_PROVIDERS: 'provider_a',
        PROVIDER_A_MODELS_REFRESH: '15m',
      });
      const ids = await pollUntil(
        async () =>
          (((await (await fetch(`${gateway.url}/v1/models`)).json()) as Json).data as Json[]).map(
            (entry) => entry.id as string,
          ),
        (list) => list.includes('gpt-7-sol'),
      );
      expect(ids).toContain('gpt-7-sol');
      expect(fake().modelsRequests()[0].headers['accept-encoding']).toBe(codexClient().acceptEncoding);

      // Several events, each flushed through the compressor on its own, as a streaming server sends them.
      const reply = { frames: [created(), textDelta('Hello, '), textDelta('compressed world'), completed()] };
      fake().enqueue(reply, reply);
      const post = (stream: boolean) =>
        postChatBody(gateway, { model: 'gpt-7-sol', stream, messages: [{ role: 'user', content: 'hi' }] });
      const whole = await post(false);
      expect(whole.status).toBe(200);
      expect(((await whole.json()) as Json).choices[0].message.content).toBe('Hello, compressed world');
      const streamed = await post(true);
      expect(streamed.status).toBe(200);
      const text = await streamed.text();
      const content = text
        .split('\n')
        .filter((line) => line.startsWith('data: {'))
        .map((line) => (JSON.parse(line.slice(6)) as Json).choices?.[0]?.delta?.content ?? '')
        .join('');
      expect(content).toBe('Hello, compressed world');
      expect(text.trim().endsWith('data: [DONE]')).toBe(true);

      for (const request of fake().requests())
        expect(request.headers['accept-encoding']).toBe(codexClient().acceptEncoding);
      // The list (at least once) and both POSTs went out compressed.
      expect(fake().compressedAnswers()).toBeGreaterThanOrEqual(3);
    },
  );
});
