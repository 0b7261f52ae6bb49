import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { BearerAuthGuard } from '../common/auth/bearer-auth.guard';
import { callerOf } from '../common/auth/bearer-auth.guard';
import { writeErrorResponse } from '../common/errors/error-writer';
import { abortOnClientDisconnect } from '../common/http/http-middleware';
import { ROOT_LOGGER } from '../common/logging/logging.module';
import { requestLoggerOf } from '../common/logging/request-log';
import { SseWriter } from '../common/sse/sse-writer';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.tokens';
import type { EventLogger } from '../core/event-logger';
import { ModelCatalog } from '../models/model-catalog';
import { queueKey } from '../queue/chat-identity';
import { aggregateCompletion, ChunkFactory, ToolCallCollector, writeChatStream } from './chat-completion.renderer';
import { ChatCommand, ChatOrchestrator, TurnRenderer } from './chat-orchestrator';
import { parseChatBody } from './chat-request.parser';
import { conversationIdOf } from '../queue/chat-identity';

/**
 * `POST /v1/chat/completions`: everything HTTP about a chat turn — the body, headers and socket
 * become a ChatCommand; the accepted turn is written as SSE (headers committed only once the
 * adapter reported acceptance, so an earlier failure is a plain JSON error) or as one
 * `chat.completion`; failures are answered in the OpenAI error shape. The turn itself is the
 * ChatOrchestrator's.
 *
 * Not a Nest `@Controller`: app.factory.ts mounts `handler` as the last Express middleware, ahead
 * of Nest's router, because routing plus Nest's per-request execution context (guard lookup,
 * parameter decorators, the exception zone) cost about 7 % of the CPU of a short turn, measured
 * with the side-by-side rig (docs/performance.md). It writes
 * its own response either way, so nothing of Nest's pipeline applied to it but the guard, whose
 * check `answer` runs first.
 */
@Injectable()
export class ChatController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly chat: ChatOrchestrator,
    private readonly catalog: ModelCatalog,
    @Inject(ROOT_LOGGER) private readonly rootLogger: EventLogger,
  ) {}

  /** The Express handler app.factory mounts (declared here, so a turn's code stays in chat/). */
  handler(guard: BearerAuthGuard): (request: Request, response: Response) => void {
    return (request, response) => this.answer(request, response, guard);
  }

  /** The route: the bearer check (401 in the error shape), then the turn; never rejects. */
  private answer(request: Request, response: Response, guard: BearerAuthGuard): void {
    try {
      guard.authorize(request);
    } catch (error) {
      writeErrorResponse(request, response, error);
      return;
    }
    // `create` answers its own failures; this only catches a bug, as the global filter would.
    this.create(request, response).catch((error: unknown) => {
      requestLoggerOf(request, this.rootLogger).error({ event: 'unhandled_error', err: error }, 'unhandled_error');
      writeErrorResponse(request, response, error);
    });
  }

  private async create(request: Request, response: Response): Promise<void> {
    const client = abortOnClientDisconnect(response);
    let command: ChatCommand;
    try {
      command = this.commandOf(request, client.signal);
    } catch (error) {
      return this.answerFailure(
        request,
        response,
        this.chat.rejected(error, requestLoggerOf(request, this.rootLogger)),
        client.signal,
      );
    }
    try {
      const completion = await this.chat.run(
        command,
        command.request.stream ? this.sse(response, command) : this.json(command),
      );
      if (completion !== undefined && !client.signal.aborted) response.status(200).json(completion);
    } catch (error) {
      this.answerFailure(request, response, error, client.signal);
    }
  }

  /** The request as the orchestrator takes it; throws `invalid_request` for an invalid body. */
  private commandOf(request: Request, signal: AbortSignal): ChatCommand {
    const parsed = parseChatBody(request.body, this.catalog.defaultModel);
    const body = request.body as Record<string, unknown>;
    const caller = callerOf(request, this.config.server.callerHeader);
    const conversation = conversationIdOf({
      body,
      headers: request.headers,
      // Read only when the cascade gets that far: the socket's address costs a getpeername
      // system call per request, and nearly every chat is identified by an earlier source.
      get remoteAddress() {
        return request.socket.remoteAddress;
      },
    });
    return {
      request: parsed,
      caller,
      conversation,
      queueKey: queueKey(this.config.agentQueue.keyMode, { body, headers: request.headers, caller, conversation }),
      requestId: String((request as Request & { id?: unknown }).id ?? ''),
      logger: requestLoggerOf(request, this.rootLogger),
      signal,
    };
  }

  /** SSE: role chunk, deltas as they arrive, tool-call frames, finish, usage?, `[DONE]`. */
  private sse(response: Response, command: ChatCommand): TurnRenderer<undefined> {
    return async (events) => {
      const outcome = await writeChatStream(
        new SseWriter(response),
        events,
        new ChunkFactory(command.request.model),
        this.collector(command),
        {
          includeUsage: command.request.includeUsage,
          signal: command.signal,
        },
      );
      return { outcome, result: undefined };
    };
  }

  /** One `chat.completion`, written by `create` once the turn is closed. */
  private json(command: ChatCommand): TurnRenderer<Record<string, unknown>> {
    return async (events) => {
      const completion = await aggregateCompletion(
        events,
        new ChunkFactory(command.request.model),
        command.request.model,
        this.collector(command),
      );
      return {
        outcome: {
          clientGone: command.signal.aborted,
          finishReason: completion.finishReason,
          toolCalls: completion.toolCalls,
        },
        result: completion.body,
      };
    };
  }

  private collector(command: ChatCommand): ToolCallCollector {
    return new ToolCallCollector(
      command.requestId,
      this.config.customToolWire,
      (index, reason) => command.logger.warn({ event: 'tool_call_invalid', index, reason }, 'tool_call_invalid'),
      command.request.parallelToolCalls === false,
    );
  }

  /** The JSON error with its real status; nothing for a client that left (already recorded as 499). */
  private answerFailure(request: Request, response: Response, thrown: unknown, signal: AbortSignal): void {
    if (signal.aborted) return;
    // After the headers the stream responder owns failures (the writer then only ends the response).
    writeErrorResponse(request, response, thrown);
  }
}
