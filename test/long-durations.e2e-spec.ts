import type { TestGateway } from './support/create-test-app';
import { startGateway } from './support/create-test-app';
import { postChatBody } from './support/chat-sse';
import { providerASettings, textReply } from './support/provider-a-fixtures';
import { useFakeProviderA } from './support/provider-a-harness';
import { eventually } from './support/poll';

type Json = Record<string, any>;

/** 720 hours: longer than the 24.8 days a Node timer holds. */
const BEYOND_A_TIMER = '720h';
/** How long a spec watches for a repetition that must not come (Node would repeat every 1 ms). */
const WATCH_MS = 500;

/**
 * A duration longer than a timer holds means never (docs/configuration.md, under the formats): a timeout
 * bounds nothing and an interval does not repeat, instead of Node firing it after 1 ms.
 */
describe('durations longer than a timer holds', () => {
  const { fake, home } = useFakeProviderA({ homePrefix: 'long-durations-' });
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
  });

  const start = async (settings: Record<string, string>) =>
    (gateway = await startGateway({
      ...providerASettings(fake(), home()),
      GATEWAY_PROVIDERS: 'provider_a',
      ...settings,
    }));
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it.each([['1000h'], ['0']])(
    'a stream idle timeout of 720h bounds nothing: the chat is answered (PROVIDER_A_TIMEOUT=%s)',
    async (turnTimeout) => {
      await start({ GATEWAY_STREAM_IDLE_TIMEOUT: BEYOND_A_TIMER, PROVIDER_A_TIMEOUT: turnTimeout });
      fake().enqueue(textReply('still here'));
      const chat = await postChatBody(gateway!, { model: 'gpt-5.6-sol', messages: [{ role: 'user', content: 'hi' }] });
      expect(chat.status).toBe(200);
      expect(((await chat.json()) as Json).choices[0].message.content).toBe('still here');
    },
  );

  it('a usage refresh interval of 720h reads the usage endpoint once, at startup', async () => {
    await start({ ACCOUNT_USAGE_REFRESH_INTERVAL: BEYOND_A_TIMER });
    await eventually(() => fake().usageRequests().length > 0, undefined, 'the startup usage read');
    await pause(WATCH_MS);
    expect(fake().usageRequests().length).toBe(1);
  });

  it('a model list refresh of 720h fetches the list once, at startup', async () => {
    await start({ PROVIDER_A_MODELS_REFRESH: BEYOND_A_TIMER });
    await eventually(() => fake().modelsRequests().length > 0, undefined, 'the startup model list fetch');
    await pause(WATCH_MS);
    expect(fake().modelsRequests().length).toBe(1);
  });
});
