import { performance } from 'node:perf_hooks';
import { sanitizeIdentifier } from '../common/logging/sanitize';
import { GatewayMetrics, modelLabel } from '../metrics/gateway-metrics';
import type { EventLogger } from '../core/event-logger';
import type { ResolvedModel } from '../core/resolved-model';
import type { UsageEvent } from '../core/chat-event';

/**
 * Everything measured about one chat request, recorded once when it ends: the request counter,
 * duration, time to first token, tokens, upstream errors, the fast-tier counter and one
 * `chat_completion` log line (counts and ids only; never prompts, arguments or output).
 */
export class ChatTelemetry {
  private readonly startedAt = performance.now();
  private firstOutputAt?: number;
  private model?: ResolvedModel;
  private recorded = false;
  stream = false;
  requestedModel = '';

  constructor(
    private readonly metrics: GatewayMetrics,
    private readonly logger: EventLogger,
  ) {}

  modelResolved(model: ResolvedModel): void {
    this.model = model;
    if (model.serviceTier === 'priority' && model.catalogId) this.metrics.fastTierRequest(model.catalogId);
  }

  firstOutput(): void {
    if (this.firstOutputAt !== undefined) return;
    this.firstOutputAt = performance.now();
    if (this.model) this.metrics.firstToken(this.model.provider, (this.firstOutputAt - this.startedAt) / 1000);
  }

  upstreamError(code: string): void {
    if (this.model) this.metrics.upstreamError(this.model.provider, code);
  }

  upstreamRetry(code: string): void {
    if (this.model) this.metrics.upstreamRetry(this.model.provider, code);
  }

  usage(usage: UsageEvent | undefined): void {
    if (!usage || !this.model) return;
    const provider = this.model.provider;
    this.metrics.tokensUsed(provider, 'prompt', usage.promptTokens);
    this.metrics.tokensUsed(provider, 'completion', usage.completionTokens);
    this.metrics.tokensUsed(provider, 'cached', usage.cachedPromptTokens ?? 0);
    this.metrics.tokensUsed(provider, 'reasoning', usage.reasoningTokens ?? 0);
  }

  finished(fields: { status: number; finishReason?: string; errorCode?: string; toolCalls?: number }): void {
    if (this.recorded) return;
    this.recorded = true;
    const durationMs = performance.now() - this.startedAt;
    this.metrics.chatRequest({
      provider: this.model?.provider,
      model: modelLabel(this.model?.catalogId),
      status: fields.status,
      stream: this.stream,
      durationSeconds: durationMs / 1000,
    });
    const record = {
      event: 'chat_completion',
      provider: this.model?.provider ?? 'none',
      model: sanitizeIdentifier(this.requestedModel),
      stream: this.stream,
      status: fields.status,
      finish_reason: fields.finishReason,
      error_code: fields.errorCode,
      tool_calls: fields.toolCalls ?? 0,
      duration_ms: Math.round(durationMs),
      ttft_ms: this.firstOutputAt === undefined ? undefined : Math.round(this.firstOutputAt - this.startedAt),
    };
    if (fields.status >= 500) this.logger.error(record, 'chat_completion');
    else if (fields.status >= 400 && fields.status !== 499) this.logger.warn(record, 'chat_completion');
    else this.logger.info(record, 'chat_completion');
  }
}
