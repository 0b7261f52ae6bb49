import { normalizeTools } from '../../src/chat/chat-tools';
import { ModelCatalog } from '../../src/models/model-catalog';
import type { ChatRequest } from '../../src/providers/shared/provider-adapter';

const catalog = ModelCatalog.load(undefined, ['provider_a', 'provider_b', 'provider_c']);

/**
 * An adapter-level ChatRequest for a catalog id saying "hi", with any field overridden; the
 * normalised tools are read from `tools` as the chat parser reads them, unless given.
 */
export function chatRequestFor(modelId: string, overrides: Partial<ChatRequest> = {}): ChatRequest {
  const model = catalog.resolve(modelId);
  if (!model) throw new Error(`unknown model ${modelId}`);
  const { tools = [], normalizedTools, ...rest } = overrides;
  return {
    model,
    messages: [{ role: 'user', content: 'hi' }],
    faithful: false,
    sampling: {},
    conversationId: 'chat:test',
    ...rest,
    tools,
    normalizedTools: normalizedTools ?? normalizeTools(tools),
  };
}
