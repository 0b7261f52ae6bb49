import type { ExtractionRequest } from '../shared/provider-adapter';
import { reasoningField } from './provider-a.request';
import type { JsonObject } from '../../common/json';

/** Our fixed instructions for structured extraction (docs/upstream/provider-a.md §6.3). */
export const EXTRACTION_INSTRUCTIONS = [
  'You are an extraction engine.',
  'Read the input and answer with exactly one JSON object that satisfies the given JSON schema.',
  'Output only that JSON object: no prose before or after it, no explanations, no Markdown and no code fences.',
  'Use only information found in the input; when the schema allows null for a value the input does not give, use null.',
].join(' ');

/**
 * Pure: ExtractionRequest → Responses body (docs/upstream/provider-a.md §6.1). Exactly these keys: model,
 * instructions, input, stream, store, reasoning, text (strict json_schema format),
 * prompt_cache_key, and service_tier for `-fast` ids; never tools, include, client_metadata or
 * an output-token cap. The caller's input goes verbatim into one user message.
 */
export function buildExtractionBody(request: ExtractionRequest, promptCacheKey: string): JsonObject {
  const body: JsonObject = {
    model: request.model.upstreamModel,
    instructions: EXTRACTION_INSTRUCTIONS,
    input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: request.input }] }],
    stream: true,
    store: false,
    reasoning: reasoningField(request.model),
    text: {
      // The resolved verbosity (catalog row or the request's override); `low` as in docs/upstream/provider-a.md §6.2 otherwise.
      verbosity: request.model.verbosity ?? 'low',
      format: { type: 'json_schema', name: request.schemaName, strict: true, schema: request.schema },
    },
    prompt_cache_key: promptCacheKey,
  };
  if (request.model.serviceTier) body.service_tier = request.model.serviceTier;
  return body;
}
