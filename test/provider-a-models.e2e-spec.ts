import { useGateway } from './support/create-test-app';
import { providerASettings, textReply } from './support/provider-a-fixtures';
import { useFakeProviderA } from './support/provider-a-harness';
import { postChatBody } from './support/chat-sse';
import { readCodexCapture } from './support/oracle-pins';

type Json = Record<string, any>;

/** The model list the pinned Codex CLI ships (`codex debug models --bundled`). */
const CLI_MODELS = readCodexCapture('models.json').models as Json[];

describe('provider_a models follow the pinned Codex CLI, and reasoning_effort is checked against them', () => {
  const { fake, home } = useFakeProviderA({ homePrefix: 'pa-models-' });
  const gateway = useGateway(() => ({ ...providerASettings(fake(), home()), GATEWAY_PROVIDERS: 'provider_a' }));

  const post = (body: Json) => postChatBody(gateway, { messages: [{ role: 'user', content: 'hi' }], ...body });

  it('lists every model the CLI lists, with an id per allowed effort and -fast ids for the priority tier; ultra (a CLI-only mode) is not offered', async () => {
    const ids = new Set(
      (((await (await fetch(`${gateway.url}/v1/models`)).json()) as Json).data as Json[]).map(
        (model) => model.id as string,
      ),
    );
    const listed = CLI_MODELS.filter((model) => model.visibility === 'list');
    expect(listed.map((model) => model.slug)).toEqual(
      expect.arrayContaining(['gpt-6.1-sol', 'gpt-6-astra', 'gpt-6-sol', 'gpt-6-luna', 'gpt-5.6-sol']),
    );
    for (const model of listed) {
      expect(ids).toContain(model.slug);
      for (const effort of model.supported_reasoning_levels as string[]) {
        const offered = effort !== 'ultra';
        expect({ id: `${model.slug}-${effort}`, listed: ids.has(`${model.slug}-${effort}`) }).toEqual({
          id: `${model.slug}-${effort}`,
          listed: offered,
        });
        if ((model.service_tiers as string[]).includes('priority'))
          expect(ids.has(`${model.slug}-fast-${effort}`)).toBe(offered);
      }
    }
  });

  it('uses the latest sol model when the request names none, with the CLI default effort', async () => {
    fake().enqueue(textReply('ok'));
    const response = await postChatBody(gateway, { messages: [{ role: 'user', content: 'hi' }] });
    expect(response.status).toBe(200);
    expect(fake().lastBody()).toMatchObject({ model: 'gpt-6.2-sol', reasoning: { effort: 'low' } });
  });

  it('still serves an -ultra id, sending what the Codex CLI sends for ultra: effort xhigh (gpt-6.1-sol-fast-ultra)', async () => {
    fake().enqueue(textReply('ok'));
    expect((await post({ model: 'gpt-6.1-sol-fast-ultra' })).status).toBe(200);
    expect(fake().lastBody()).toMatchObject({
      model: 'gpt-6.1-sol',
      reasoning: { effort: 'xhigh', context: 'all_turns' },
      service_tier: 'priority',
    });
    fake().enqueue(textReply('ok'));
    expect((await post({ model: 'gpt-6.1-sol', reasoning_effort: 'ultra' })).status).toBe(200);
    expect(fake().lastBody()).toMatchObject({ reasoning: { effort: 'xhigh' } });
  });

  it.each([
    ['gpt-6-luna', 'ultra', 'low, medium, high, xhigh, max'],
    ['gpt-5.6-sol', 'minimal', 'low, medium, high, xhigh, max, ultra'],
    ['provider_a/gpt-6.1-sol', 'none', 'low, medium, high, xhigh, max, ultra'],
  ])(
    'refuses %s with reasoning_effort %s: 400 naming the allowed values, no upstream call',
    async (model, effort, allowed) => {
      const response = await post({ model, reasoning_effort: effort });
      expect(response.status).toBe(400);
      const error = ((await response.json()) as Json).error;
      expect(error).toMatchObject({
        type: 'invalid_request_error',
        code: 'invalid_request',
        param: 'reasoning_effort',
      });
      expect(error.message).toContain(allowed);
      expect(fake().requests()).toHaveLength(0);
    },
  );

  it('passes a model the catalog does not know through provider_a/<model> with any effort', async () => {
    fake().serveModels([
      ...fake().servedModels(),
      { slug: 'gpt-7-sol', supported_reasoning_levels: [{ effort: 'low' }, { effort: 'max' }] },
    ]);
    fake().enqueue(textReply('ok'));
    expect((await post({ model: 'provider_a/gpt-7-sol', reasoning_effort: 'max' })).status).toBe(200);
    expect(fake().lastBody()).toMatchObject({ model: 'gpt-7-sol', reasoning: { effort: 'max' } });
  });

  it('refuses a passthrough model id no upstream can name with 400 naming model, before any upstream call', async () => {
    const response = await post({ model: 'provider_a/gpt-7-sol✓' });
    expect(response.status).toBe(400);
    expect(((await response.json()) as Json).error).toMatchObject({ type: 'invalid_request_error', param: 'model' });
    expect(fake().requests()).toHaveLength(0);
  });

  // Ids are exact (docs/error-codes.md "model_not_found"): a passthrough is never served trimmed.
  it.each(['provider_a/gpt-6.2-sol ', 'provider_a/gpt-6.2-sol\t', 'provider_a/gpt-6.2-sol\n'])(
    'answers the passthrough %j, a served id but for the space after it, 404 naming that id, no upstream call',
    async (model) => {
      const response = await post({ model });
      expect(response.status).toBe(404);
      const error = ((await response.json()) as Json).error;
      expect(error).toMatchObject({ code: 'model_not_found' });
      expect(error.message).toContain('did you mean provider_a/gpt-6.2-sol (');
      expect(fake().requests()).toHaveLength(0);
    },
  );

  it.each(['provider_a/ gpt-6.2-sol', 'provider_a/ gpt-6.2-sol ', 'provider_a/\tgpt-6.2-sol'])(
    'refuses the passthrough %j, a space inside it, with 400 naming model, no upstream call',
    async (model) => {
      const response = await post({ model });
      expect(response.status).toBe(400);
      expect(((await response.json()) as Json).error).toMatchObject({
        type: 'invalid_request_error',
        param: 'model',
        message:
          'the model id after "<family>/" must be 1 to 128 printable ASCII characters without spaces; choose one from GET /v1/models',
      });
      expect(fake().requests()).toHaveLength(0);
    },
  );

  it('answers a passthrough model the upstream does not know with 404 naming the model, without a retry', async () => {
    // The upgrade takes a script; the refused frame leaves it queued.
    fake().enqueue(textReply('never sent'));
    const response = await post({ model: 'provider_a/gpt-0-nothing' });
    expect(response.status).toBe(404);
    const error = ((await response.json()) as Json).error;
    expect(error).toMatchObject({ type: 'invalid_request_error', code: 'model_not_found' });
    expect(error.message).toContain('"gpt-0-nothing"');
    expect(error.message).toContain('GET /v1/models');
    expect(fake().requests()).toHaveLength(1);
    expect(fake().tokenRequests()).toHaveLength(0);
  });
});
