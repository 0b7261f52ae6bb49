import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.tokens';
import type { EventLogger } from '../core/event-logger';
import { clientLeft, GatewayError } from '../core/gateway.error';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { IdempotencyStore, InFlightBinding } from './idempotency-store';
import { StructuredAllowlist } from './structured-allowlist';
import { deadline, untilAborted } from '../common/async/abortable';
import { deadlineFor, modelDeadlineError } from './structured-deadline';
import { ExtractionPlan, StructuredExtractor } from './structured-extractor';
import { auditSubjectOf, recordStructuredFailure } from './structured-failure';
import { deriveIdentity } from './structured-identity';
import { parseStructuredRequest } from './structured-request.parser';
import { renderSuccess, SharedAnswer, StructuredSuccessBody } from './structured-response';
import { StructuredTelemetry } from './structured-telemetry';

/** One structured request as the orchestrator takes it: what HTTP parsing produced, no HTTP objects. */
export interface StructuredCommand {
  /**
   * Epoch ms the request arrived, before its body was read: the deadline clock and `latency_ms`
   * start here (docs/design/behaviours.md §6.1).
   */
  readonly arrivedAt: number;
  /**
   * The request arrived after the drain began (its headers, not its body): refused `draining`
   * (docs/design/behaviours.md §6.1), while one that arrived before still runs to its end.
   */
  readonly arrivedWhileDraining: boolean;
  /** The caller (docs/design/decisions.md §5), resolved once from the request. */
  readonly caller: string;
  /** The body as the JSON parser produced it (anything, or undefined). */
  readonly body: unknown;
  /** Whether the Content-Type was `application/json`. */
  readonly contentTypeIsJson: boolean;
  /** A body the parser refused (too big, bad JSON), answered at its place in the admission order. */
  readonly bodyError?: GatewayError;
  /** The request's logger: its lines carry the request id. */
  readonly logger: EventLogger;
  /**
   * Aborted when the client leaves; also by the drain deadline, with the `draining` GatewayError
   * as its reason, which is answered (clientLeft tells the two apart).
   */
  readonly signal: AbortSignal;
}

/** What to answer: the success body, the error (in the structured shape), or nothing (the client left). */
export type StructuredOutcome =
  | { readonly kind: 'success'; readonly body: StructuredSuccessBody }
  | { readonly kind: 'failure'; readonly error: GatewayError }
  | { readonly kind: 'canceled' };

/**
 * One structured inference end to end, without HTTP, in the admission order of
 * docs/design/behaviours.md §6.1 (the bearer was checked by the global guard): draining, body,
 * envelope, schema, model, identity, idempotency store, then one detached extraction (which
 * compiles the schema's validator first) that every participant of the binding awaits under its
 * own deadline and connection. A replay, a conflict or a joiner compiles nothing. Every outcome
 * is recorded once (audit line and metrics) before it is returned.
 */
@Injectable()
export class StructuredOrchestrator {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly allowlist: StructuredAllowlist,
    private readonly store: IdempotencyStore<SharedAnswer>,
    private readonly extractor: StructuredExtractor,
    private readonly metrics: GatewayMetrics,
  ) {}

  async run(command: StructuredCommand): Promise<StructuredOutcome> {
    const { arrivedAt, caller, signal, logger } = command;
    const telemetry = new StructuredTelemetry(
      this.metrics,
      logger,
      auditSubjectOf(command.body, caller, this.allowlist),
      arrivedAt,
    );
    let inflight = false;
    try {
      if (command.arrivedWhileDraining) throw new GatewayError('draining');
      if (command.bodyError) throw command.bodyError;
      const envelope = parseStructuredRequest(command.contentTypeIsJson, command.body);
      const model = this.allowlist.resolve(envelope.model, {
        reasoningEffort: envelope.reasoningEffort,
        verbosity: envelope.verbosity,
      });
      const identity = deriveIdentity(envelope, model, caller, this.allowlist.policyVersion);
      this.metrics.structuredInflightChanged(1);
      inflight = true;
      const plan: ExtractionPlan = {
        envelope,
        model,
        caller,
        identity,
        policyVersion: this.allowlist.policyVersion,
        deadlineAt: deadlineFor(arrivedAt, envelope.deadlineMs, this.config.structured.maxDeadlineMs),
        logger,
      };
      const { answer, replay } = envelope.idempotencyKey
        ? await this.keyed(plan, signal)
        : await this.keyless(plan, signal);
      if (clientLeft(signal)) return this.canceled(telemetry);
      const body = renderSuccess(answer, envelope.requestId, telemetry.latencyMs, replay);
      telemetry.succeeded(replay);
      return { kind: 'success', body };
    } catch (error) {
      if (clientLeft(signal)) return this.canceled(telemetry);
      // The gateway ended the request (the drain deadline): its reason is the answer.
      const failure = signal.aborted ? signal.reason : error;
      return { kind: 'failure', error: recordStructuredFailure(failure, telemetry) };
    } finally {
      if (inflight) this.metrics.structuredInflightChanged(-1);
    }
  }

  /** The client left before its answer: nothing is written (docs/design/decisions.md §4). */
  private canceled(telemetry: StructuredTelemetry): StructuredOutcome {
    telemetry.canceled();
    return { kind: 'canceled' };
  }

  /** Step 12 (docs/design/behaviours.md §6.6): replay, conflict, capacity, lead or join. */
  private async keyed(
    plan: ExtractionPlan,
    clientSignal: AbortSignal,
  ): Promise<{ answer: SharedAnswer; replay: boolean }> {
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
  private async keyless(
    plan: ExtractionPlan,
    clientSignal: AbortSignal,
  ): Promise<{ answer: SharedAnswer; replay: boolean }> {
    return { answer: await this.extractor.run(plan, clientSignal), replay: false };
  }

  /**
   * Waits for the binding's outcome until this participant's client leaves or (for joiners) its
   * own deadline ends; either way it leaves the binding, and the last one out aborts the call.
   */
  private async participate(
    binding: InFlightBinding<SharedAnswer>,
    clientSignal: AbortSignal,
    deadlineAt?: number,
  ): Promise<SharedAnswer> {
    const expiry = deadlineAt === undefined ? undefined : deadline(deadlineAt, modelDeadlineError, [clientSignal]);
    const waitSignal = expiry?.signal ?? clientSignal;
    try {
      return await untilAborted(binding.outcome, waitSignal);
    } catch (error) {
      // This participant left (client gone, the drain deadline, or its own deadline): the last one
      // out aborts the call, with its client signal's reason when that is why it left. After an
      // outcome there is nothing to leave; the outcome ended the binding for everyone.
      if (waitSignal.aborted) this.store.leave(binding, clientSignal.aborted ? clientSignal.reason : undefined);
      throw error;
    } finally {
      expiry?.clear();
    }
  }
}
