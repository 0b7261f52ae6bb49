import type { ClientFamily, ReadFileArgs } from './support/client-scenarios';
import { describeClientScenarios, fakeUpstream } from './support/client-scenarios';
import { FakeCodeAssist } from './support/fake-provider-b';
import {
  callFrame,
  errorFrame,
  errorInfo,
  finishFrame,
  providerBSettings,
  textFrame,
} from './support/provider-b-fixtures';

// Usage every scripted turn reports, and what the gateway turns it into.
const FAKE_USAGE = { prompt: 11, candidates: 6, total: 17 };

/** A `:generateContent` body (non-streaming): one candidate with `parts`, STOP and usage. */
function generateBody(parts: unknown[]): unknown {
  return {
    response: {
      candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP' }],
      usageMetadata: {
        promptTokenCount: FAKE_USAGE.prompt,
        candidatesTokenCount: FAKE_USAGE.candidates,
        totalTokenCount: FAKE_USAGE.total,
      },
      modelVersion: 'gemini-2.5-pro',
      responseId: 'r-nonstream',
    },
    traceId: 't-nonstream',
  };
}

/** provider_b (Gemini Code Assist) behind `FakeCodeAssist`; streaming turns use `:streamGenerateContent`, the others `:generateContent`. */
function providerBFamily(): ClientFamily {
  const upstream = fakeUpstream({
    homePrefix: 'clients-provider-b-',
    startFake: () => FakeCodeAssist.start(),
    settings: (fake, home) => ({
      ...providerBSettings(fake, home, { project: 'fake-project' }),
      GATEWAY_PROVIDERS: 'provider_b',
      PROVIDER_B_TIMEOUT: '8s',
    }),
  });
  let callCount = 0;

  return {
    family: 'provider_b',
    model: 'gemini-2.5-pro',
    usage: { prompt_tokens: 11, completion_tokens: 6, total_tokens: 17 },
    start: upstream.start,
    stop: upstream.stop,
    reset() {
      upstream.fake.reset();
    },
    scriptText(pieces, mode) {
      if (mode === 'non-stream')
        return upstream.fake.enqueue('generateContent', { body: generateBody([{ text: pieces.join('') }]) });
      upstream.fake.enqueue('streamGenerateContent', {
        frames: [...pieces.map((piece) => ({ json: textFrame(piece) })), { json: finishFrame('STOP', FAKE_USAGE) }],
      });
    },
    scriptReadFileCall(args, mode) {
      const id = `call_gemini_${++callCount}`;
      const signature = `sig-${callCount}`;
      if (mode === 'non-stream') {
        upstream.fake.enqueue('generateContent', {
          body: generateBody([{ functionCall: { id, name: 'read_file', args }, thoughtSignature: signature }]),
        });
      } else {
        upstream.fake.enqueue('streamGenerateContent', {
          frames: [
            { json: callFrame('read_file', { ...args }, { id, signature }) },
            { json: finishFrame('STOP', FAKE_USAGE) },
          ],
        });
      }
      return id;
    },
    async expectContinuation(callId: string, args: ReadFileArgs, output: string) {
      const requests = [
        ...upstream.fake.requests('streamGenerateContent'),
        ...upstream.fake.requests('generateContent'),
      ].sort((a, b) => a.receivedAt - b.receivedAt);
      const contents = requests.at(-1)?.body.request.contents as Array<{ role: string; parts: any[] }>;
      // docs/upstream/provider-b.md §6: the assistant turn is a `model` content with the functionCall; the tool
      // message is the next `user` content with a functionResponse carrying the same id.
      const callIndex = contents.findIndex(
        (content) => content.role === 'model' && content.parts.some((part) => part.functionCall),
      );
      expect(callIndex).toBeGreaterThanOrEqual(0);
      const call = contents[callIndex].parts.find((part) => part.functionCall);
      expect(call.functionCall).toEqual({ id: callId, name: 'read_file', args });
      // The signature the fake attached came back (the SDKs drop extra_content; the gateway remembers it).
      expect(call.thoughtSignature).toMatch(/^sig-\d+$/);
      expect(contents[callIndex + 1]).toEqual({
        role: 'user',
        parts: [{ functionResponse: { id: callId, name: 'read_file', response: { output } } }],
      });
    },
    scriptUsageLimit(turns) {
      // Code Assist's spent quota for the model, no reset given (QUOTA_EXHAUSTED without RetryInfo).
      const spent = {
        status: 429,
        body: errorFrame(429, 'RESOURCE_EXHAUSTED', 'quota exhausted', [errorInfo('QUOTA_EXHAUSTED')]),
      };
      for (const route of ['generateContent', 'streamGenerateContent'] as const)
        upstream.fake.enqueue(route, ...Array.from({ length: turns }, () => spent));
    },
    upstreamTurns() {
      return upstream.fake.requests('generateContent').length + upstream.fake.requests('streamGenerateContent').length;
    },
  };
}

describeClientScenarios(providerBFamily());
