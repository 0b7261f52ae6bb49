import { ModelCatalog } from '../../src/models/model-catalog';
import type { ChatRequest } from '../../src/providers/provider-adapter';

const catalog = ModelCatalog.load(undefined, ['provider_a', 'provider_b', 'provider_c']);

/** An adapter-level ChatRequest for a catalog id saying "hi", with any field overridden. */
export function chatRequestFor(modelId: string, overrides: Partial<ChatRequest> = {}): ChatRequest {
  const model = catalog.resolve(modelId);
  if (!model) throw new Error(`unknown model ${modelId}`);
  return {
    model,
    messages: [{ role: 'user', content: 'hi' }],
    tools: [],
    faithful: false,
    sampling: {},
    conversationId: 'chat:test',
    ...overrides,
  };
}
