import { Inject, Injectable } from '@nestjs/common';
import { BUILD_INFO, BuildInfo } from '../common/build/build-info';
import { GatewayError } from '../core/gateway.error';
import { familyMessage } from '../core/error-codes';
import { toGatewayError } from '../common/errors/to-gateway-error';
import { GatewayMetrics, modelLabel } from '../metrics/gateway-metrics';
import type { EventLogger } from '../core/event-logger';
import type { ExtractionRequest, ExtractionResult } from '../providers/shared/provider-adapter';
import type { ResolvedModel } from '../core/resolved-model';
import { ProviderRegistry } from '../providers/provider-registry';
import { limitOutputDetails, OutputValidator } from '../common/json-schema/output-validator';
import { deadline, untilAborted } from '../common/async/abortable';
import { modelDeadlineError } from './structured-deadline';
import { extractionConversationId, StructuredIdentity, upstreamSchemaName } from './structured-identity';
import { StructuredQueue } from '../queue/structured-queue';
import type { StructuredEnvelope } from './structured-request.parser';
import type { SharedAnswer } from './structured-response';
import { parseJsonObjectOutput } from '../common/json-schema/json-object-output';
import { limitDetails } from './schema-subset.walker';

/** Everything one inference needs; built by the leader (or a key-less request). */
export interface ExtractionPlan {
  readonly envelope: StructuredEnvelope;
  readonly model: ResolvedModel;
  readonly caller: string;
  readonly identity: StructuredIdentity;
  readonly policyVersion: string;
  /** Epoch ms: the leader's deadline covers queueing and the upstream call. */
  readonly deadlineAt: number;
  readonly logger: EventLogger;
}

/** The upstream's code for a schema its strict mode cannot honour (docs/upstream/provider-a.md §10). */
const SCHEMA_REFUSED = 'invalid_json_schema';

/**
 * The structured words of an upstream 400 about the request itself: a schema the upstream's
 * strict mode refuses is `invalid_schema` 400, with the upstream's reason in `details` as its log
 * line would have had it (quoted spans, secrets and control characters removed by
 * sanitizeUpstreamMessage): it names the place in the caller's own schema. An input over the
 * model's context window, or any other refusal, keeps its code (the contract's `upstream_error`
 * 502 on this route, sent with x-should-retry: false: errorAnswer) and names the upstream's error
 * code only: such a message may echo the input, which is never sent back. Neither reaches the log.
 */
function requestRefusal(error: GatewayError): GatewayError | undefined {
  if (error.code === 'bad_request' && error.upstream?.code === SCHEMA_REFUSED) {
    const reason = error.upstreamMessage;
    return new GatewayError('invalid_schema', {
      publicMessage: "the upstream's strict mode refused the schema; simplify it where details say",
      details: [reason === undefined ? '$: the upstream gave no reason' : `upstream: ${reason}`],
      cause: error,
    });
  }
  if (error.code === 'context_window') {
    return error.with({
      publicMessage: "input exceeds the model's context window; shorten input, or choose a model with a larger one",
    });
  }
  if (error.code === 'bad_request') {
    const code = error.upstream?.code ?? error.upstream?.type;
    return error.with({
      publicMessage: `the upstream refused the request${code ? ` (${code})` : ''}; the same request fails the same way: change the input or the schema`,
    });
  }
  return undefined;
}

/** The structured route's own wording for upstream failures (docs/design/behaviours.md §6.9). */
function withStructuredMessage(error: GatewayError): GatewayError {
  const refusal = requestRefusal(error);
  if (refusal) return refusal;
  // A failure the table words per family (a login, a missing CLI) already names its fix.
  if (error.publicMessage !== undefined || familyMessage(error.code, error.provider) !== undefined) return error;
  if (error.spec.structuredCode !== 'upstream_error') return error;
  return error.with({ publicMessage: 'upstream error', cause: error });
}

/**
 * Admission steps 13–15 for one inference: the structured queue, the provider_a extraction call
 * (no tools, profile, scaffold or prewarm: docs/upstream/provider-a.md §6), then parse and validate the output.
 * Runs detached from any one client: `signal` aborts only when nobody waits any more.
 */
@Injectable()
export class StructuredExtractor {
  constructor(
    private readonly validator: OutputValidator,
    private readonly registry: ProviderRegistry,
    private readonly queue: StructuredQueue,
    private readonly metrics: GatewayMetrics,
    @Inject(BUILD_INFO) private readonly build: BuildInfo,
  ) {}

  async run(plan: ExtractionPlan, signal: AbortSignal): Promise<SharedAnswer> {
    const { envelope, model, identity, deadlineAt, logger } = plan;
    const adapter = this.registry.adapter(model.provider);
    if (!adapter?.extract) throw new GatewayError('upstream', { detail: `${model.provider} has no extraction mode` });
    this.compileSchema(identity.schemaSha256, envelope.schema);
    const slot = await this.queue.acquire({
      caller: plan.caller,
      signal,
      deadlineAt,
      requestId: envelope.requestId,
      logger,
    });
    let result: ExtractionResult;
    try {
      const request: ExtractionRequest = {
        model,
        input: envelope.input,
        schema: envelope.schema,
        schemaName: upstreamSchemaName(envelope.schemaName, envelope.operation),
        conversationId: extractionConversationId(plan.caller, envelope.operation, identity.schemaSha256),
      };
      result = await this.callWithinDeadline(signal, deadlineAt, (callSignal) =>
        adapter.extract!(request, {
          signal: callSignal,
          requestId: envelope.requestId,
          logger,
          deadlineAt,
          retried: (code) => this.metrics.upstreamRetry(model.provider, code),
          omitUpstreamMessage: true,
        }),
      );
    } catch (error) {
      // Nobody waits any more: keep the abort reason so it is recorded as canceled, not as a failure.
      if (signal.aborted) throw signal.reason ?? error;
      const failure = toGatewayError(error).attributeTo(model.provider);
      if (failure.spec.upstream) this.metrics.upstreamError(model.provider, failure.code, 'structured');
      throw withStructuredMessage(failure);
    } finally {
      slot.release();
    }
    const label = modelLabel(model.catalogId);
    this.metrics.structuredTokensUsed(label, 'prompt', result.usage.promptTokens);
    this.metrics.structuredTokensUsed(label, 'completion', result.usage.completionTokens);
    return {
      data: this.validatedData(result.text, identity.schemaSha256, envelope.schema),
      model: result.upstreamModel || envelope.model,
      upstream_response_id: result.upstreamResponseId ?? '',
      usage: {
        prompt_tokens: result.usage.promptTokens,
        completion_tokens: result.usage.completionTokens,
        total_tokens: result.usage.totalTokens,
      },
      idempotency_key: envelope.idempotencyKey ?? '',
      operation: envelope.operation ?? '',
      schema_version: envelope.schemaVersion ?? '',
      model_policy_version: plan.policyVersion,
      build: this.build,
    };
  }

  /**
   * The upstream call bounded by the deadline even if an adapter ignored its signal: on expiry
   * the signal aborts the call (the fake sees its connection closed) and this rejects at once.
   */
  private async callWithinDeadline<T>(
    signal: AbortSignal,
    deadlineAt: number,
    call: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    // Aborts with the client's reason when it leaves, with modelDeadlineError at the deadline.
    const expiry = deadline(deadlineAt, modelDeadlineError, [signal]);
    try {
      return await untilAborted(call(expiry.signal), expiry.signal);
    } catch (error) {
      if (expiry.signal.aborted) throw expiry.signal.reason;
      // An adapter that enforced `deadlineAt` itself reports a plain timeout; it is still ours.
      if (GatewayError.isInstance(error) && error.code === 'timeout' && Date.now() >= deadlineAt)
        throw modelDeadlineError();
      throw error;
    } finally {
      expiry.clear();
    }
  }

  /**
   * Step 13 (docs/design/behaviours.md §6.1): the schema's validator, compiled before a queue slot
   * and any upstream call, and only by a call that will use it. The walker refused every schema
   * JSON Schema itself refuses that it knows of (duplicates included); what Ajv still refuses is
   * an `invalid_schema` all the same, before tokens are spent.
   */
  private compileSchema(schemaSha256: string, schema: Record<string, unknown>): void {
    const problems = this.validator.prepare(schemaSha256, schema);
    if (problems.length > 0) {
      throw new GatewayError('invalid_schema', {
        publicMessage: 'schema uses unsupported constructs',
        details: limitDetails(problems),
      });
    }
  }

  /** Step 15 (docs/design/behaviours.md §6.8): unparsable or non-conforming output is a 422. */
  private validatedData(text: string, schemaSha256: string, schema: Record<string, unknown>): Record<string, unknown> {
    const parsed = parseJsonObjectOutput(text);
    if (!parsed.ok && parsed.nonFinite) {
      // An object, but not one any schema accepts: a schema miss.
      this.metrics.structuredValidated('invalid');
      throw new GatewayError('output_validation_failed', {
        details: limitOutputDetails(parsed.nonFinite.map((path) => `${path}: must be a finite number`)),
      });
    }
    if (!parsed.ok) {
      this.metrics.structuredValidated('unparsable');
      throw new GatewayError('output_validation_failed', {
        publicMessage: 'the model output is not a JSON object; retry with a fresh idempotency_key',
        details: ['$: the output is not a JSON object'],
      });
    }
    const check = this.validator.check(schemaSha256, schema, parsed.value);
    if (!check.valid) {
      this.metrics.structuredValidated('invalid');
      throw new GatewayError('output_validation_failed', { details: check.details });
    }
    this.metrics.structuredValidated('valid');
    return parsed.value;
  }
}
