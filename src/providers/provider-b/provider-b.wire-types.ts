/**
 * Code Assist `v1internal` request shapes we send (docs/upstream/provider-b.md §5–§7), then the response shapes
 * we read (docs/upstream/provider-b.md §9). Type-only: no runtime module.
 */

export interface CodeAssistPart {
  readonly text?: string;
  readonly thought?: boolean;
  readonly functionCall?: { readonly id?: string; readonly name: string; readonly args: Record<string, unknown> };
  readonly functionResponse?: {
    readonly id?: string;
    readonly name: string;
    readonly response: { readonly output: string };
  };
  readonly thoughtSignature?: string;
  /** An inline image (base64), as the Gemini CLI sends pasted images. */
  readonly inlineData?: { readonly mimeType: string; readonly data: string };
}

export interface CodeAssistContent {
  readonly role: 'user' | 'model';
  readonly parts: readonly CodeAssistPart[];
}

/** As the Gemini CLI declares tools: the JSON Schema goes in `parametersJsonSchema`, never `parameters`. */
export interface FunctionDeclaration {
  readonly name: string;
  readonly description?: string;
  readonly parametersJsonSchema?: Record<string, unknown>;
}

export interface FunctionCallingConfig {
  readonly mode: 'AUTO' | 'NONE' | 'ANY';
  readonly allowedFunctionNames?: readonly string[];
}

export interface GenerationConfig {
  readonly thinkingConfig?: { readonly includeThoughts: boolean; readonly thinkingLevel?: 'HIGH' };
  readonly temperature?: number;
  readonly topP?: number;
  readonly maxOutputTokens?: number;
  readonly stopSequences?: readonly string[];
  readonly seed?: number;
  readonly responseMimeType?: 'application/json';
  /** A full JSON Schema (unlike `responseSchema`, the OpenAPI subset), as sent by the client. */
  readonly responseJsonSchema?: Record<string, unknown>;
}

export interface GenerateContentRequest {
  readonly contents: readonly CodeAssistContent[];
  readonly systemInstruction?: { readonly role: 'user'; readonly parts: readonly [{ readonly text: string }] };
  readonly tools?: readonly [{ readonly functionDeclarations: readonly FunctionDeclaration[] }];
  readonly toolConfig?: { readonly functionCallingConfig: FunctionCallingConfig };
  readonly generationConfig?: GenerationConfig;
  readonly session_id: string;
}

/** The envelope around a Gemini request (docs/upstream/provider-b.md §5.3). */
export interface CodeAssistEnvelope {
  readonly model: string;
  readonly project: string;
  readonly user_prompt_id: string;
  readonly request: GenerateContentRequest;
}

/**
 * One `streamGenerateContent` SSE payload, or the `generateContent` body (docs/upstream/provider-b.md §9.1): the
 * Gemini response in the Code Assist envelope. Only what the translation reads is declared. The
 * payloads arrive as parsed JSON, so `readCodeAssistResponse` (`provider-b.stream.ts`) is the one
 * place that checks them: a field of another JSON type reads as absent, as it always did. An
 * `{"error": …}` payload is classified before (`provider-b.errors.ts`, docs/upstream/provider-b.md §10) and never read as this.
 */
export interface CodeAssistResponse {
  /** Always present once read: a payload without the wrapper is the response itself (docs/upstream/provider-b.md §9.1). */
  readonly response: GenerateContentResponse;
  readonly traceId?: string;
}

export interface GenerateContentResponse {
  /** Only candidate 0 is translated (docs/upstream/provider-b.md §9.2); an entry that is not a JSON object reads as `{}`. */
  readonly candidates?: readonly ResponseCandidate[];
  readonly usageMetadata?: UsageMetadata;
  readonly promptFeedback?: { readonly blockReason?: string };
  readonly responseId?: string;
  readonly traceId?: string;
}

export interface ResponseCandidate {
  /** `STOP`, `MAX_TOKENS`, `SAFETY`, `MALFORMED_FUNCTION_CALL`… (docs/upstream/provider-b.md §9.3). */
  readonly finishReason?: string;
  /** Parts that are not JSON objects are left out. */
  readonly content?: { readonly parts?: readonly ResponsePart[] };
}

/** A part of the model's answer (docs/upstream/provider-b.md §9.2): text (maybe a thought), a whole function call, or nothing we read. */
export interface ResponsePart {
  readonly text?: string;
  readonly thought?: boolean;
  readonly functionCall?: ResponseFunctionCall;
  readonly thoughtSignature?: string;
}

export interface ResponseFunctionCall {
  readonly id?: string;
  readonly name?: string;
  /**
   * The arguments as the model wrote them: a JSON object (a Struct). Any other JSON value is kept
   * as it came, so the chat layer refuses the call as invalid rather than it reaching the client
   * with arguments the model never wrote.
   */
  readonly args?: unknown;
}

/** `usageMetadata` (docs/upstream/provider-b.md §9.3). */
export interface UsageMetadata {
  readonly promptTokenCount?: number;
  readonly candidatesTokenCount?: number;
  readonly thoughtsTokenCount?: number;
  /** Input the model read from its own tool use (a search's results); not in `promptTokenCount`. */
  readonly toolUsePromptTokenCount?: number;
  readonly totalTokenCount?: number;
  readonly cachedContentTokenCount?: number;
}
