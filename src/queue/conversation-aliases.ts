import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { growingLru } from '../common/growing-lru';
import type { ConversationId } from './chat-identity';
import { earliestToolConversation } from './chat-identity';

/** Chats remembered at once; the least recently continued is forgotten first. */
const MAX_ALIASES = 10_000;
/** A chat silent this long is forgotten, as the account pool forgets its pin. */
const ALIAS_IDLE_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * Keeps a chat's upstream identity across the one turn where the conversation cascade changes its
 * answer (docs/queue-and-context.md "Chat identity"). A chat without an id is known by its first
 * user message until its first tool call, and by that call's id from the next turn on. The turn
 * that made the call remembers it here, so later turns, found by the call's id, keep the identity
 * the chat started with: the same upstream prompt-cache key, kept connection and login. Only the
 * identity the adapters see is kept; the queue key follows the cascade as it is.
 */
@Injectable()
export class ConversationAliases {
  /** The first identity a chat had, by the identity its first tool call gives it. */
  private readonly aliases = new LRUCache<string, ConversationId>({
    ...growingLru(MAX_ALIASES),
    ttl: ALIAS_IDLE_TTL_MS,
    updateAgeOnGet: true,
  });
  /** Which tool-call identity took each first identity: one chat per first identity. */
  private readonly claimedBy = new LRUCache<string, string>({
    ...growingLru(MAX_ALIASES),
    ttl: ALIAS_IDLE_TTL_MS,
    updateAgeOnGet: true,
  });

  /**
   * A turn of `conversation` answered with a tool call whose id is `firstToolCallId`. Only a chat
   * still known by its first user message changes identity at its next turn: others keep theirs.
   * Two chats of one caller that start with the same message share that identity until their
   * first tool calls; only the first of them keeps it, so they do not share an upstream identity
   * for good. Both identities are in the caller's scope, so an alias never crosses callers.
   */
  remember(conversation: ConversationId, firstToolCallId: string | undefined): void {
    if (conversation.source !== 'chat:first_user' || firstToolCallId === undefined) return;
    // The call's identity in the caller's own scope: aliases never cross callers.
    const next = earliestToolConversation(firstToolCallId, conversation.scope);
    if (next === undefined) return;
    const owner = this.claimedBy.get(conversation.value);
    if (owner !== undefined && owner !== next.value) return;
    this.claimedBy.set(conversation.value, next.value);
    this.aliases.set(next.value, conversation);
  }

  /** The identity a turn's upstream sees: the one its chat started with, when remembered. */
  upstreamIdentity(conversation: ConversationId): ConversationId {
    if (conversation.source !== 'chat:earliest_tool') return conversation;
    return this.aliases.get(conversation.value) ?? conversation;
  }
}
