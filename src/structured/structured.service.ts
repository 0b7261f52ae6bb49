import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { PinoLogger } from 'nestjs-pino';
import { resolveCaller } from '../common/auth/caller';
import { GatewayError } from '../core/gateway.error';
import { abortOnClientDisconnect } from '../common/http/client-abort';
import { deferredBodyError } from '../common/http/http-middleware';
import { DrainService } from '../common/lifecycle/drain.service';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.tokens';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { IdempotencyStore, InFlightBinding } from './idempotency-store';
import { OutputValidator } from './output-validator';
import { limitDetails } from './schema-subset.walker';
import { StructuredAllowlist } from './structured-allowlist';
import { answerStructuredFailure, auditSubjectOf } from './structured-failure';
import { deadlineFor, deadlineSignal, untilAborted } from './structured-deadline';
import { ExtractionPlan, StructuredExtractor } from './structured-extractor';
import { canonicalSha256, deriveIdentity } from './structured-identity';
import { parseStructuredRequest } from './structured-request.parser';
import { renderSuccess, SharedAnswer } from './structured-response';
import { StructuredTelemetry } from './structured-telemetry';

/** body-parser's default JSON type: `application/json`, parameters allowed. */
const JSON_CONTENT_TYPE = /^application\/json[ \t]*(;|$)/i;

/**
 * `POST /v1/structured/inference` end to end, in the admission order of gateway-behaviours.md
 * §6.1 (the bearer was checked by the global guard): draining, body, envelope, schema, model,
 * identity, idempotency store, then one detached extraction that every participant of the
 * binding awaits under its own deadline and connection.
 */
@Injectable()
export class StructuredService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly drain: DrainService,
    private readonly allowlist: StructuredAllowlist,
    private readonly store: IdempotencyStore<SharedAnswer>,
    private readonly extractor: StructuredExtractor,
    private readonly validator: OutputValidator,
    private readonly metrics: GatewayMetrics,
    private readonly logger: PinoLogger,
  ) {}

  async handle(request: Request, response: Response): Promise<void> {
    // The deadline clock starts when the request arrives (§6.1).
    const arrivedAt = Date.now();
    const client = abortOnClientDisconnect(response);
    const caller = resolveCaller(request.headers, this.config.server.callerHeader);
    const telemetry = new StructuredTelemetry(this.metrics, this.logger, auditSubjectOf(request, caller, this.allowlist));
    let inflight = false;
    try {
      if (this.drain.isDraining) throw new GatewayError('draining');
      const bodyError = deferredBodyError(request);
      if (bodyError) throw bodyError;
      const envelope = parseStructuredRequest(JSON_CONTENT_TYPE.test(request.headers['content-type'] ?? ''), request.body);
      // Still step 9: a schema JSON Schema itself refuses must fail before the model check.
      const schemaSha256 = canonicalSha256(envelope.schema);
      const schemaProblems = this.validator.prepare(schemaSha256, envelope.schema);
      if (schemaProblems.length > 0) {
        throw new GatewayError('invalid_schema', { publicMessage: 'schema uses unsupported constructs', details: limitDetails(schemaProblems) });
      }
      const model = this.allowlist.resolve(envelope.model, { reasoningEffort: envelope.reasoningEffort, verbosity: envelope.verbosity });
      const identity = deriveIdentity(envelope, model, caller, this.allowlist.policyVersion, schemaSha256);
      this.metrics.structuredInflightChanged(1);
      inflight = true;
      const plan: ExtractionPlan = {
        envelope,
        model,
        caller,
        identity,
        policyVersion: this.allowlist.policyVersion,
        deadlineAt: deadlineFor(arrivedAt, envelope.deadlineMs, this.config.structured.maxDeadlineMs),
        logger: this.logger,
      };
      const { answer, replay } = envelope.idempotencyKey ? await this.keyed(plan, client.signal) : await this.keyless(plan, client.signal);
      if (client.signal.aborted) return telemetry.canceled();
      response.status(200).json(renderSuccess(answer, envelope.requestId, telemetry.latencyMs, replay));
      telemetry.succeeded(replay);
    } catch (error) {
      answerStructuredFailure(request, response, error, client.signal.aborted, telemetry, this.logger);
    } finally {
      if (inflight) this.metrics.structuredInflightChanged(-1);
    }
  }

  /** Step 12 (§6.6): replay, conflict, capacity, lead or join. */
  private async keyed(plan: ExtractionPlan, clientSignal: AbortSignal): Promise<{ answer: SharedAnswer; replay: boolean }> {
    const admission = this.store.admit(plan.identity.replayKey, plan.identity.fingerprint);
    switch (admission.kind) {
      case 'replay':
        this.metrics.structuredIdempotencyResult('local_hit');
        return { answer: admission.value, replay: true };
      case 'conflict':
        this.metrics.structuredIdempotencyResult('conflict');
        throw new GatewayError('idempotency_conflict');
      case 'capacity':
        this.metrics.structuredIdempotencyResult('capacity');
        throw new GatewayError('idempotency_store_full', { retryAfterSeconds: admission.retryAfterSeconds });
      case 'lead': {
        this.metrics.structuredIdempotencyResult('miss');
        const { binding } = admission;
        this.extractor.run(plan, binding.signal).then(
          (answer) => this.store.succeed(binding, answer),
          (error) => this.store.fail(binding, error),
        );
        // The leader's deadline already bounds the extraction itself.
        return { answer: await this.participate(binding, clientSignal), replay: false };
      }
      case 'join':
        this.metrics.structuredIdempotencyResult('local_hit');
        return { answer: await this.participate(admission.binding, clientSignal, plan.deadlineAt), replay: true };
    }
  }

  /** A key-less request never touches the store: its own call, aborted when its client leaves. */
  private async keyless(plan: ExtractionPlan, clientSignal: AbortSignal): Promise<{ answer: SharedAnswer; replay: boolean }> {
    return { answer: await this.extractor.run(plan, clientSignal), replay: false };
  }

  /**
   * Waits for the binding's outcome until this participant's client leaves or (for joiners) its
   * own deadline ends; either way it leaves the binding, and the last one out aborts the call.
   */
  private async participate(binding: InFlightBinding<SharedAnswer>, clientSignal: AbortSignal, deadlineAt?: number): Promise<SharedAnswer> {
    const deadline = deadlineAt === undefined ? undefined : deadlineSignal(deadlineAt);
    const waitSignal = deadline ? AbortSignal.any([clientSignal, deadline.signal]) : clientSignal;
    try {
      return await untilAborted(binding.outcome, waitSignal);
    } catch (error) {
      // This participant left (client gone, or its deadline): the last one out aborts the call.
      // After an outcome there is nothing to leave; the outcome ended the binding for everyone.
      if (waitSignal.aborted) this.store.leave(binding);
      throw error;
    } finally {
      deadline?.clear();
    }
  }
}
