import { Controller, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { callerOf, chatScope } from '../common/auth/bearer-auth.guard';
import { compressUnlessStream } from '../common/http/compression.interceptor';
import { abortOnClientDisconnect } from '../common/http/http-middleware';
import { ROOT_LOGGER } from '../common/logging/logging.module';
import { arrivalOf, requestLoggerOf } from '../common/logging/request-log';
import { KeepAliveSweep } from '../common/sse/keep-alive-sweep';
import { SseWriter } from '../common/sse/sse-writer';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.tokens';
import type { EventLogger } from '../core/event-logger';
import type { ProviderId } from '../core/provider-id';
import { clientLeft } from '../core/gateway.error';
import { ModelCatalog } from '../models/model-catalog';
import { queueKey } from '../queue/chat-identity';
import type { StreamOutcome } from './chat-completion.renderer';
import { aggregateCompletion, ChunkFactory, ToolCallCollector, writeChatStream } from './chat-completion.renderer';
import { ChatCommand, ChatOrchestrator, TurnRenderer } from './chat-orchestrator';
import { askedFor, parseChatBody } from './chat-request.parser';
import type { StrictTools } from './strict-tools';
import { conversationIdOf } from '../queue/chat-identity';

/**
 * `POST /v1/chat/completions`: everything HTTP about a chat turn — the body, headers and socket
 * become a ChatCommand; the accepted turn is written as SSE (headers committed only once the
 * adapter reported acceptance) or as one `chat.completion`. The turn itself is the
 * ChatOrchestrator's.
 *
 * A Nest route like the others: the global bearer guard admits it, compression is set up as the
 * compression interceptor does it (off for streams) but by the handler itself, so that Nest runs
 * no interceptor chain for the route (see CompressionInterceptor), and what fails before the stream starts (an invalid body, a
 * turn refused before acceptance, a bug) is thrown to the exception filter, which answers it in
 * the OpenAI error shape. The body arrives parsed by the route's body middleware (app.factory.ts).
 */
@Controller('v1/chat')
export class ChatController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly chat: ChatOrchestrator,
    private readonly catalog: ModelCatalog,
    @Inject(ROOT_LOGGER) private readonly rootLogger: EventLogger,
    private readonly keepAlive: KeepAliveSweep,
  ) {}

  /**
   * Writes its own response (`@Res()`): a stream must be written as it arrives. Throws what the
   * client should be answered with when the turn fails before its headers went out; the
   * orchestrator has recorded it by then.
   */
  @Post('completions')
  @HttpCode(200)
  create(@Req() request: Request, @Res() response: Response): Promise<void> {
    compressUnlessStream(request, response);
    const client = abortOnClientDisconnect(response);
    let command: ChatCommand;
    try {
      command = this.commandOf(request, client);
    } catch (error) {
      throw this.chat.rejected(
        error,
        requestLoggerOf(request, this.rootLogger),
        arrivalOf(request),
        askedFor(request.body, this.catalog.defaultModel),
      );
    }
    // The turn's own promise is the route's: a stream holds no suspended handler of ours.
    if (command.request.stream) {
      const writer = new SseWriter(response, this.keepAlive);
      // The writer also keeps the connection alive while the gateway holds an answer back.
      return this.chat.run(command, this.sse(writer, command), writer);
    }
    return this.chat.run(command, this.json(command)).then((completion) => {
      if (!clientLeft(client.signal)) response.status(200).json(completion);
    });
  }

  /** The request as the orchestrator takes it; throws `invalid_request` for an invalid body. */
  private commandOf(request: Request, client: AbortController): ChatCommand {
    const parsed = parseChatBody(request.body, this.catalog.defaultModel);
    const body = request.body as Record<string, unknown>;
    const caller = callerOf(request, this.config.server.callerHeader);
    const scope = chatScope(caller, this.config.server.bearerSecret !== undefined);
    const conversation = conversationIdOf(new ConversationSource(body, request, scope));
    return {
      request: parsed,
      caller,
      conversation,
      queueKey: queueKey(this.config.agentQueue.keyMode, { body, headers: request.headers, caller, conversation }),
      requestId: String((request as Request & { id?: unknown }).id ?? ''),
      logger: requestLoggerOf(request, this.rootLogger),
      client,
      arrivedAt: arrivalOf(request),
    };
  }

  /** SSE: role chunk, deltas as they arrive, tool-call frames, finish, usage?, `[DONE]`. */
  private sse(writer: SseWriter, command: ChatCommand): TurnRenderer<void> {
    return (events, provider, strict) =>
      writeChatStream(
        writer,
        events,
        new ChunkFactory(command.request.model),
        this.collector(command, provider, strict),
        {
          includeUsage: command.request.includeUsage,
          signal: command.client.signal,
        },
      ).then(streamRendered);
  }

  /** One `chat.completion`, written by `create` once the turn is closed. */
  private json(command: ChatCommand): TurnRenderer<Record<string, unknown>> {
    return async (events, provider, strict) => {
      const completion = await aggregateCompletion(
        events,
        new ChunkFactory(command.request.model),
        command.request.model,
        this.collector(command, provider, strict),
      );
      return {
        outcome: {
          clientGone: clientLeft(command.client.signal),
          finishReason: completion.finishReason,
          toolCalls: completion.toolCalls,
          firstToolCallId: completion.firstToolCallId,
        },
        result: completion.body,
      };
    };
  }

  private collector(command: ChatCommand, provider: ProviderId, strict: StrictTools | undefined): ToolCallCollector {
    return new ToolCallCollector(command.requestId, this.config.customToolWire, {
      logger: command.logger,
      provider,
      firstCallOnly: command.request.parallelToolCalls === false,
      strict,
    });
  }
}

/** A written stream as the orchestrator takes it: its outcome, and nothing to answer after. */
function streamRendered(outcome: StreamOutcome): { outcome: StreamOutcome; result: void } {
  return { outcome, result: undefined };
}

/**
 * What the conversation cascade reads of a request. The peer address is read only when the
 * cascade gets that far: it costs a getpeername system call per request, and nearly every chat is
 * identified by an earlier source.
 */
class ConversationSource {
  readonly headers: Request['headers'];

  constructor(
    readonly body: Record<string, unknown>,
    private readonly request: Request,
    readonly scope: string | undefined,
  ) {
    this.headers = request.headers;
  }

  get remoteAddress(): string | undefined {
    return this.request.socket.remoteAddress;
  }
}
