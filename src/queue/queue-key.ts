// PLACEHOLDER written by the lead so the tree compiles; the queue engineer replaces this file entirely.
import type { IncomingHttpHeaders } from 'node:http';
import { createHash } from 'node:crypto';

export interface QueueKeyInput {
  readonly body: Record<string, unknown>;
  readonly headers: IncomingHttpHeaders;
  readonly remoteAddress?: string;
  readonly caller: string;
}
export interface QueueKey {
  readonly mode: string;
  readonly value: string;
  readonly hash: string;
}
const key = (mode: string, value: string): QueueKey => ({ mode, value, hash: createHash('sha256').update(value).digest('hex').slice(0, 16) });
export function chatKey(_input: QueueKeyInput): QueueKey {
  return key('chat:global', 'global');
}
export function queueKey(_mode: string, _input: QueueKeyInput): QueueKey {
  return key('global', 'global');
}
export function isToolTurn(body: Record<string, unknown>): boolean {
  return Array.isArray(body.tools) && body.tools.length > 0;
}
