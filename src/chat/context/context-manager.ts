// PLACEHOLDER written by the lead so the tree compiles; the queue engineer replaces this file entirely.
import type { AppConfig } from '../../config/app-config';
import type { ChatMessage } from '../../providers/chat-types';

export interface ContextStats {
  messages: number;
  bytes_before: number;
  bytes_after: number;
  tool_messages: number;
  truncated: number;
  compacted: number;
  recent_kept: number;
}
export function manageContext(messages: readonly ChatMessage[], _settings: AppConfig['contextManagement']): { messages: ChatMessage[]; stats?: ContextStats } {
  return { messages: [...messages] };
}
