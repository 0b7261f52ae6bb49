import { Inject, Injectable } from '@nestjs/common';
import { GatewayError } from '../../core/gateway.error';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.tokens';
import type { CallContext, ChatRequest, ExtractionRequest, ExtractionResult, ProviderAdapter } from '../provider-adapter';
import type { ChatEvent, UsageEvent } from '../../core/chat-event';
import { ProviderAAuth, ProviderACredentials } from './provider-a.auth';
import { buildExtractionBody } from './provider-a.extraction';
import { FaithfulProfile, loadFaithfulProfile, localTimeZone } from './provider-a.faithful-profile';
import { ProviderATransportKind, upstreamHeaders } from './provider-a.headers';
import { installationIdFor, newTurnId, sessionIdForChat } from './provider-a.identifiers';
import { RateLimitTelemetry } from './provider-a.rate-limits';
import { buildChatBody, turnMetadata } from './provider-a.request';
import { OpenConnection, transportForUrl } from './provider-a.transport';
import { openSseConnection } from './provider-a.transport-sse';
import { openWebSocketConnection } from './provider-a.transport-ws';
import { AttemptPlan, startTurn, TurnOptions } from './provider-a.turn';

const NO_USAGE: UsageEvent = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };

/**
 * provider_a: the ChatGPT Codex Responses backend through the Codex CLI login. Wiring only: the
 * login (`provider-a.auth`), bodies (`provider-a.request`, `provider-a.extraction`), transports
 * and the event translation (`provider-a.stream`) live in their own files; per-call state lives
 * in `startTurn`, never on this instance.
 */
@Injectable()
export class ProviderAAdapter implements ProviderAdapter {
  readonly id = 'provider_a' as const;
  private readonly auth: ProviderAAuth;
  private readonly rateLimits = new RateLimitTelemetry();
  private readonly profile: FaithfulProfile;
  private readonly transport: ProviderATransportKind;
  private readonly open: OpenConnection;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.auth = new ProviderAAuth(config.providerA.authFile, config.providerA.tokenUrl);
    // Read at construction so a missing or invalid profile fails startup (ConfigError).
    this.profile = loadFaithfulProfile(config.providerA.faithfulProfilePath);
    this.transport = transportForUrl(config.providerA.url);
    this.open = this.transport === 'ws' ? openWebSocketConnection : openSseConnection;
  }

  async stream(request: ChatRequest, context: CallContext): Promise<AsyncIterable<ChatEvent>> {
    const sessionId = sessionIdForChat(request.chatKey);
    let logged = false;
    const plan = (credentials: ProviderACredentials): AttemptPlan => {
      const built = this.chatAttempt(request, sessionId, credentials);
      if (!logged) {
        logged = true;
        context.logger.debug(
          {
            event: 'provider_a_request',
            transport: this.transport,
            faithful: request.faithful,
            input_items: (built.body.input as unknown[]).length,
            tools: Array.isArray(built.body.tools) ? built.body.tools.length : 0,
            dropped_parts: built.droppedParts,
          },
          'provider_a_request',
        );
        if (built.orphanToolMessages > 0) {
          context.logger.info({ event: 'orphan_tool_message', count: built.orphanToolMessages }, 'orphan_tool_message');
        }
      }
      return built;
    };
    const turn = await startTurn(this.turnOptions(plan), context);
    return turn.events;
  }

  /** Same events as `stream()`; the chat layer aggregates them. */
  complete(request: ChatRequest, context: CallContext): Promise<AsyncIterable<ChatEvent>> {
    return this.stream(request, context);
  }

  /** Strict JSON-schema extraction (provider_a.md §6): minimal headers, no profile, no tools. */
  async extract(request: ExtractionRequest, context: CallContext): Promise<ExtractionResult> {
    const body = buildExtractionBody(request);
    const turn = await startTurn(
      this.turnOptions((credentials) => ({ headers: upstreamHeaders(this.transport, credentials, request.promptCacheKey), body })),
      context,
    );
    let text = '';
    let usage: UsageEvent | undefined;
    let finished = false;
    for await (const event of turn.events) {
      if (event.type === 'text-delta') text += event.text;
      else if (event.type === 'usage') usage = event.usage;
      else if (event.type === 'error') throw event.error;
      else if (event.type === 'finish') {
        finished = true;
        break;
      }
    }
    if (!finished) throw new GatewayError('upstream', { detail: 'extraction ended without a finish event' });
    const response = turn.response();
    return { text, upstreamResponseId: response.id ?? '', upstreamModel: response.model ?? null, usage: usage ?? NO_USAGE };
  }

  private turnOptions(plan: TurnOptions['plan']): TurnOptions {
    return {
      url: this.config.providerA.url,
      open: this.open,
      plan,
      auth: this.auth,
      rateLimits: this.rateLimits,
      turnTimeoutMs: this.config.providerA.timeoutMs,
      idleTimeoutMs: this.config.server.streamIdleTimeoutMs,
    };
  }

  /** Body and headers of one chat attempt; faithful mode gets a fresh turn id per attempt. */
  private chatAttempt(request: ChatRequest, sessionId: string, credentials: ProviderACredentials) {
    if (!request.faithful) {
      const built = buildChatBody(request, { sessionId });
      return { ...built, headers: upstreamHeaders(this.transport, credentials, sessionId) };
    }
    const turnId = newTurnId();
    const installationId = installationIdFor(this.config.providerA.codexHome);
    const built = buildChatBody(request, {
      sessionId,
      faithful: { profile: this.profile, turnId, installationId, now: new Date(), timeZone: localTimeZone() },
    });
    const headers = upstreamHeaders(this.transport, credentials, sessionId, { turnId, turnMetadata: turnMetadata(sessionId, turnId, installationId) });
    return { ...built, headers };
  }
}
