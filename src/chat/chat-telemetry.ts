import { performance } from 'node:perf_hooks';
import { sanitizeIdentifier } from '../common/logging/sanitize';
import { GatewayMetrics, modelLabel } from '../metrics/gateway-metrics';
import type { ChatEvent, UsageEvent } from '../core/chat-event';
import type { EventLogger } from '../core/event-logger';
import type { ResolvedModel } from '../core/resolved-model';

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
  private lastUsage?: UsageEvent;

  constructor(
    private readonly metrics: GatewayMetrics,
    private readonly logger: EventLogger,
    private readonly request: { readonly stream: boolean; readonly requestedModel: string },
  ) {}

  modelResolved(model: ResolvedModel): void {
    this.model = model;
    if (model.serviceTier === 'priority' && model.catalogId) this.metrics.fastTierRequest(model.catalogId);
  }

  /** Every event the client is given passes here: the first output (time to first token) and usage. */
  observe(event: ChatEvent): void {
    if (event.type === 'usage') this.lastUsage = event.usage;
    else if (event.type === 'tool-call' || ((event.type === 'text-delta' || event.type === 'reasoning-delta') && event.text !== '')) this.firstOutput();
  }

  /** The tokens of the last usage event, counted once when a turn's answer was written. */
  countUsage(): void {
    this.usage(this.lastUsage);
  }

  private firstOutput(): void {
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

  private usage(usage: UsageEvent | undefined): void {
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
      stream: this.request.stream,
      durationSeconds: durationMs / 1000,
    });
    const record = {
      event: 'chat_completion',
      provider: this.model?.provider ?? 'none',
      model: sanitizeIdentifier(this.request.requestedModel),
      stream: this.request.stream,
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
