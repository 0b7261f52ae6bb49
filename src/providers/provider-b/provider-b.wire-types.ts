/** Code Assist `v1internal` request shapes we send (provider_b.md §5–§7). */

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
  readonly thinkingConfig?: { readonly includeThoughts: boolean };
  readonly temperature?: number;
  readonly topP?: number;
  readonly maxOutputTokens?: number;
  readonly stopSequences?: readonly string[];
  readonly seed?: number;
  readonly presencePenalty?: number;
  readonly frequencyPenalty?: number;
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

/** The envelope around a Gemini request (provider_b.md §5.3). */
export interface CodeAssistEnvelope {
  readonly model: string;
  readonly project: string;
  readonly user_prompt_id: string;
  readonly request: GenerateContentRequest;
}
