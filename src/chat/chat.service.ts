import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { PinoLogger } from 'nestjs-pino';
import { resolveCaller } from '../common/auth/caller';
import { sendErrorResponse } from '../common/errors/error-response';
import { GatewayError } from '../core/gateway.error';
import { toGatewayError } from '../common/errors/to-gateway-error';
import { abortOnClientDisconnect } from '../common/http/client-abort';
import { SseWriter } from '../common/sse/sse-writer';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.tokens';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import type { CallContext, ChatRequest } from '../providers/provider-adapter';
import { ProviderRegistry } from '../providers/provider-registry';
import { AgentQueueService } from '../queue/agent-queue.service';
import { chatKey, isToolTurn, QueueKeyInput, queueKey } from '../queue/queue-key';
import { ChunkFactory } from './chat-chunks';
import { aggregateCompletion } from './chat-completion.aggregator';
import { ParsedChatBody, parseChatBody } from './chat-request.parser';
import { writeChatStream } from './chat-stream.responder';
import { ChatTelemetry } from './chat-telemetry';
import { manageContext } from './context/context-manager';
import { ToolCallCollector } from './tool-call-collector';

/**
 * One chat turn end to end: validate → resolve the model → context management → agent queue →
 * adapter → SSE or chat.completion. Errors before the SSE headers are JSON errors with their
 * real status; the adapter is only called after admission; the queue slot is released on every
 * path; a client disconnect aborts the upstream at once and is recorded as 499 `canceled`.
 */
@Injectable()
export class ChatService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly registry: ProviderRegistry,
    private readonly queue: AgentQueueService,
    private readonly metrics: GatewayMetrics,
    private readonly logger: PinoLogger,
  ) {}

  async handle(request: Request, response: Response): Promise<void> {
    const abort = abortOnClientDisconnect(response);
    const requestId = String((request as Request & { id?: unknown }).id ?? '');
    const telemetry = new ChatTelemetry(this.metrics, this.logger);
    try {
      const body = parseChatBody(request.body);
      telemetry.stream = body.stream;
      telemetry.requestedModel = body.model;
      const route = this.registry.resolve(body.model, { reasoningEffort: body.reasoningEffort, verbosity: body.verbosity });
      telemetry.modelResolved(route.model);
      const messages = this.manageContext(body);
      const keyInput: QueueKeyInput = {
        body: request.body as Record<string, unknown>,
        headers: request.headers,
        remoteAddress: request.socket.remoteAddress,
        caller: resolveCaller(request.headers, this.config.server.callerHeader),
      };
      const conversation = chatKey(keyInput);
      const mode = this.config.agentQueue.keyMode;
      const slot = await this.queue.admit({
        provider: route.model.provider,
        toolTurn: isToolTurn(request.body as Record<string, unknown>),
        key: mode === 'chat' ? conversation : queueKey(mode, keyInput),
        signal: abort.signal,
        logger: this.logger,
        requestId,
      });
      try {
        const chatRequest: ChatRequest = {
          model: route.model,
          messages,
          tools: body.tools,
          toolChoice: body.toolChoice,
          parallelToolCalls: body.parallelToolCalls,
          faithful: body.faithful,
          sampling: body.sampling,
          chatKey: conversation.value,
          customToolWire: this.config.customToolWire,
        };
        const context: CallContext = { signal: abort.signal, requestId, logger: this.logger, retried: (code) => telemetry.upstreamRetry(code) };
        const collector = new ToolCallCollector(requestId, this.config.customToolWire, (index, reason) =>
          this.logger.warn({ event: 'tool_call_invalid', index, reason }, 'tool_call_invalid'),
        );
        const chunks = new ChunkFactory(body.model);
        const hooks = { onFirstOutput: () => telemetry.firstOutput() };
        if (body.stream) {
          const events = await route.adapter.stream(chatRequest, context);
          const outcome = await writeChatStream(new SseWriter(response), events, chunks, collector, {
            includeUsage: body.includeUsage,
            signal: abort.signal,
            hooks,
          });
          telemetry.usage(outcome.usage);
          if (outcome.clientGone) return telemetry.finished({ status: 499, errorCode: 'canceled' });
          if (outcome.errorCode) telemetry.upstreamError(outcome.errorCode);
          return telemetry.finished({ status: 200, finishReason: outcome.finishReason, errorCode: outcome.errorCode, toolCalls: outcome.toolCalls });
        }
        const events = await route.adapter.complete(chatRequest, context);
        const outcome = await aggregateCompletion(events, chunks, body.model, collector, hooks);
        telemetry.usage(outcome.usage);
        if (abort.signal.aborted) return telemetry.finished({ status: 499, errorCode: 'canceled' });
        response.status(200).json(outcome.body);
        telemetry.finished({ status: 200, finishReason: outcome.finishReason, toolCalls: outcome.toolCalls });
      } finally {
        slot.release();
      }
    } catch (thrown) {
      this.answerFailure(request, response, thrown, abort.signal, telemetry);
    }
  }

  /** Context management runs only on requests that carry tools (gateway-behaviours.md §5). */
  private manageContext(body: ParsedChatBody) {
    if (body.tools.length === 0 || !this.config.contextManagement.enabled) return body.messages;
    const result = manageContext(body.messages, this.config.contextManagement);
    if (result.stats) this.logger.info({ event: 'context_manage', ...result.stats }, 'context_manage');
    return result.messages;
  }

  private answerFailure(request: Request, response: Response, thrown: unknown, signal: AbortSignal, telemetry: ChatTelemetry): void {
    if (signal.aborted) {
      telemetry.finished({ status: 499, errorCode: 'canceled' });
      return;
    }
    const error = toGatewayError(thrown);
    if (error.code === 'internal') this.logger.error({ event: 'chat_internal_error', err: thrown }, 'chat_internal_error');
    if (isUpstreamFailure(error)) telemetry.upstreamError(error.code);
    if (response.headersSent) {
      // The stream responder owns failures after the headers; this only happens on a bug.
      if (!response.writableEnded) response.end();
      telemetry.finished({ status: 200, errorCode: error.code });
      return;
    }
    const status = sendErrorResponse(request, response, error);
    telemetry.finished({ status, errorCode: error.code });
  }
}

const UPSTREAM_CODES = new Set(['auth', 'rate_limited', 'usage_limit', 'context_window', 'bad_request', 'not_found', 'upstream', 'invalid_tool_call', 'timeout']);

function isUpstreamFailure(error: GatewayError): boolean {
  return UPSTREAM_CODES.has(error.code);
}
