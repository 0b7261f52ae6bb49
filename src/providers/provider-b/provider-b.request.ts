import { sha256Hex, uuidFromHex } from '../../common/hashing';
import type { ResolvedModel } from '../../core/resolved-model';
import type { ChatRequest, ResponseFormat, SamplingOptions } from '../shared/provider-adapter';
import type { ContentsReport } from './provider-b.contents';
import { convertMessages } from './provider-b.contents';
import { convertToolChoice, toolsOf } from './provider-b.tools';
import { withUpstreamToolNames } from './provider-b.tool-names';
import type { ToolNameMap } from '../shared/tool-names';
import type { CodeAssistEnvelope, GenerateContentRequest, GenerationConfig } from './provider-b.wire-types';
import { THINKING_LEVEL_HIGH_MODELS } from './provider-b.constants';

export interface ProviderBRequestOptions {
  /** The Code Assist project (configured or discovered). */
  readonly project: string;
  /** Fresh per gateway request: the request id. */
  readonly userPromptId: string;
  /** Process-local thought-signature memory by call id (docs/upstream/provider-b.md §8). */
  readonly signatureFor?: (callId: string) => string | undefined;
}

/** Counts the adapter logs; the translation itself stays pure. */
export interface ProviderBRequestReport extends ContentsReport {
  unresolvedRefs: number;
  /** Client tool names Gemini would refuse, sent under names of their own (provider-b.tool-names.ts). */
  renamedToolNames: number;
}

export interface BuiltProviderBRequest {
  readonly envelope: CodeAssistEnvelope;
  /** Custom tool names of this request; the stream translation needs them for returned calls. */
  readonly customToolNames: ReadonlySet<string>;
  /** The client's tool names ↔ the names sent; the stream gives returned calls the client's name. */
  readonly toolNames: ToolNameMap;
  readonly report: ProviderBRequestReport;
}

/**
 * Pure: ChatRequest → the Code Assist envelope (docs/upstream/provider-b.md §5–§8). Empty members
 * (`systemInstruction`, `tools`, `toolConfig`, `generationConfig`) are omitted; tool names Gemini
 * would refuse are renamed everywhere in the body (docs/upstream/provider-b.md §7.4).
 */
export function buildProviderBRequest(request: ChatRequest, options: ProviderBRequestOptions): BuiltProviderBRequest {
  const tools = toolsOf(request.normalizedTools);
  const report: ProviderBRequestReport = {
    cancelledToolCalls: 0,
    orphanToolResults: 0,
    unresolvedRefs: tools.unresolvedRefs,
    renamedToolNames: 0,
  };
  const { systemText, contents } = convertMessages(
    request.messages,
    tools.customNames,
    options.signatureFor ?? (() => undefined),
    report,
  );
  const hasTools = tools.declarations.length > 0;
  const functionCallingConfig = hasTools ? convertToolChoice(request.toolChoice) : undefined;
  const generationConfig = buildGenerationConfig(request.model, request.sampling, request.responseFormat);

  const built: GenerateContentRequest = {
    contents,
    // The CLI sends its system instruction as a content with role `user` (captured).
    ...(systemText !== undefined ? { systemInstruction: { role: 'user', parts: [{ text: systemText }] } } : {}),
    ...(hasTools ? { tools: [{ functionDeclarations: tools.declarations }] } : {}),
    ...(functionCallingConfig ? { toolConfig: { functionCallingConfig } } : {}),
    ...(generationConfig ? { generationConfig } : {}),
    session_id: providerBSessionId(request.conversationId),
  };
  // Names are mapped last, over every place a name appears in the finished body.
  const { body, names } = withUpstreamToolNames(built);
  report.renamedToolNames = names.renamed;
  return {
    envelope: {
      model: request.model.upstreamModel,
      project: options.project,
      user_prompt_id: options.userPromptId,
      request: body,
    },
    customToolNames: tools.customNames,
    toolNames: names,
    report,
  };
}

/**
 * Thoughts stay on unless the effective effort is `none`; the effort value itself is not sent
 * (a Gemini 3 id gets the CLI's fixed `thinkingLevel: "HIGH"`).
 * Sampling fields arrive already filtered to what Code Assist honours (provider-b.parameters.ts);
 * a JSON `response_format` becomes `responseMimeType: "application/json"` with the client's schema
 * as `responseJsonSchema`, as Gemini CLI 0.61.0's `BaseLlmClient.generateJson` asks for JSON
 * (its Code Assist converter forwards both fields unchanged).
 */
function buildGenerationConfig(
  model: ResolvedModel,
  sampling: SamplingOptions,
  format: ResponseFormat | undefined,
): GenerationConfig | undefined {
  // A cap above what the model gives is the model's maximum: the backend refuses a larger one.
  const maxTokens =
    sampling.maxTokens !== undefined ? Math.min(sampling.maxTokens, model.maxOutputTokens ?? Infinity) : undefined;
  const config: GenerationConfig = {
    ...(model.reasoningEffort !== 'none' ? { thinkingConfig: thinkingConfig(model) } : {}),
    ...(sampling.temperature !== undefined ? { temperature: sampling.temperature } : {}),
    ...(sampling.topP !== undefined ? { topP: sampling.topP } : {}),
    ...(maxTokens !== undefined ? { maxOutputTokens: maxTokens } : {}),
    ...(sampling.stop !== undefined && sampling.stop.length > 0 ? { stopSequences: [...sampling.stop] } : {}),
    ...(sampling.seed !== undefined ? { seed: sampling.seed } : {}),
    ...(format ? { responseMimeType: 'application/json' } : {}),
    ...(format?.type === 'json_schema' ? { responseJsonSchema: format.schema } : {}),
  };
  return Object.keys(config).length > 0 ? config : undefined;
}

/** Thoughts on; the CLI's Gemini 3 ids also ask for the high thinking level, as its config does. */
function thinkingConfig(model: ResolvedModel): NonNullable<GenerationConfig['thinkingConfig']> {
  return THINKING_LEVEL_HIGH_MODELS.has(cliModelId(model))
    ? { includeThoughts: true, thinkingLevel: 'HIGH' }
    : { includeThoughts: true };
}

/**
 * The id the Gemini CLI would be started with (`gemini -m <id>`): the catalog id the client asked
 * for, else the passthrough's model. The CLI names it in its User-Agent and chooses its generation
 * config by it; the envelope's `model` is the backend's id (`gemini-3.5-flash` is sent as
 * `gemini-3-flash`).
 */
export function cliModelId(model: ResolvedModel): string {
  return model.catalogId ?? model.upstreamModel;
}

/**
 * Stable per chat (docs/upstream/provider-b.md §5.3), derived as docs/providers.md "Conversation identity" says:
 * UUID-formatted `sha256_hex("provider_b.session:" + conversationId)`.
 */
export function providerBSessionId(conversationId: string): string {
  return uuidFromHex(sha256Hex(`provider_b.session:${conversationId}`));
}
