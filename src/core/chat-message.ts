/**
 * The OpenAI chat shapes the gateway accepts, as adapters see them after validation. Unknown
 * fields are kept (clients send many); only the ones below are interpreted.
 */
export type ChatRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

export interface ContentPart {
  readonly type?: string;
  readonly text?: unknown;
  readonly [key: string]: unknown;
}

export interface ChatToolCall {
  readonly id?: string;
  readonly type?: string;
  readonly function?: { readonly name?: string; readonly arguments?: string };
  readonly custom?: { readonly name?: string; readonly input?: string };
  readonly extra_content?: { readonly google?: { readonly thought_signature?: string } };
  readonly [key: string]: unknown;
}

export interface ChatMessage {
  readonly role: ChatRole;
  readonly content?: string | readonly ContentPart[] | null;
  readonly tool_calls?: readonly ChatToolCall[];
  readonly tool_call_id?: string;
  readonly name?: string;
  readonly [key: string]: unknown;
}

/** A client tool definition, nested (`{type, function:{…}}`) or flat (`{type, name, …}`). */
export type ToolDefinition = Readonly<Record<string, unknown>>;
