import { Inject, Injectable } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { toGatewayError } from '../common/errors/to-gateway-error';
import { clientErrorLogFields } from '../common/errors/error-writer';
import { OutputValidator } from '../common/json-schema/output-validator';
import { loggedModelId, redactQuotedSecrets } from '../common/logging/request-log';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.tokens';
import type { ChatEvent, PolledEvents, UsageEvent } from '../core/chat-event';
import { isEmptyToolCall, isRefusalFinish } from '../core/chat-event';
import type { EventLogger } from '../core/event-logger';
import type { ResolvedModel } from '../core/resolved-model';
import type { ProviderId } from '../core/provider-id';
import type { ChatMessage } from '../core/chat-message';
import type { ErrorCode } from '../core/error-codes';
import { answerLogLevel } from '../core/error-codes';
import { clientLeft, endedByGateway, GatewayError, isCanceled } from '../core/gateway.error';
import { GatewayMetrics, modelLabel } from '../metrics/gateway-metrics';
import type { CallContext, ChatRequest } from '../providers/shared/provider-adapter';
import { failureLogFields } from '../providers/shared/upstream-log';
import { ProviderRegistry } from '../providers/provider-registry';
import { AgentQueueService } from '../queue/agent-queue.service';
import { isToolTurn, QueueKey } from '../queue/chat-identity';
import { ConversationAliases } from '../queue/conversation-aliases';
import type { ParsedChatBody } from './chat-request.parser';
import type { FamilyParameterFates } from './chat-parameters';
import { parameterFatesOf } from './chat-parameters';
import type { ConversationId } from '../queue/chat-identity';
import { manageContext } from './context/context-manager';
import { bufferTurn, formatUnmet, JsonAnswer, JsonVerdict, MAX_JSON_ATTEMPTS, replay, wholeTurn } from './json-answer';
import { StopRule, StopSequenceMatcher } from './stop-sequences';
import { StrictTools } from './strict-tools';
import { ToolCallCollector } from './chat-completion.renderer';
import { ChosenTurn, ToolChoiceRule } from './tool-choice-rule';

/** One chat turn as the orchestrator takes it: parsed and identified by the front end, no HTTP. */
export interface ChatCommand {
  readonly request: ParsedChatBody;
  /** The caller (docs/design/decisions.md §5), resolved once from the request. */
  readonly caller: string;
  readonly conversation: ConversationId;
  /** The agent queue key for the configured PRIMARY_AGENT_QUEUE_KEY_MODE. */
  readonly queueKey: QueueKey;
  readonly requestId: string;
  /** The request's logger: its lines carry the request id. */
  readonly logger: EventLogger;
  /**
   * The request's one controller. Aborted when the client leaves: the turn is canceled at once and
   * recorded as 499. Also aborted by the drain deadline, with the `draining` GatewayError as its
   * reason, and by the turn at its own deadline, with `timeout`: the turn is ended the same way,
   * but that error is answered and recorded (clientLeft tells them apart).
   */
  readonly client: AbortController;
  /** Epoch ms the request arrived, its body not yet read (arrivalOf): what duration and time to first token count from. */
  readonly arrivedAt: number;
}

/** What the front end made of the accepted turn's events. */
export interface TurnOutcome {
  /** The client left; nothing more was written. */
  readonly clientGone: boolean;
  /** The finish reason given to the client (`tool_calls` when it got tool calls). */
  readonly finishReason?: string;
  /** The failure written in-band after acceptance (the contract's error chunk). */
  readonly failure?: GatewayError;
  readonly toolCalls: number;
  /** The id of the first tool call the client got: how the chat's next turn will find its identity. */
  readonly firstToolCallId?: string;
}

/**
 * Writes or gathers an accepted turn's events (SSE, one JSON body, another wire format), answered
 * by the family `provider`; `strict`: the request's strict tools whose calls the gateway checks
 * (none on a family whose upstream holds them). It returns the outcome, or throws a GatewayError
 * while nothing was written yet (the front end then answers it with its status). It needs not
 * close `events`: the orchestrator does.
 */
export type TurnRenderer<T> = (
  events: AsyncIterable<ChatEvent>,
  provider: ProviderId,
  strict: StrictTools | undefined,
) => Promise<{ readonly outcome: TurnOutcome; readonly result: T }>;

/**
 * How a streamed front end keeps its client's connection alive while the gateway holds an accepted
 * answer back (a `tool_choice` or `response_format` it enforces, asked again until it passes): the
 * SSE writer. The answer's silence may last several upstream runs; a proxy would cut it.
 */
export interface HeldAnswerKeepAlive {
  /** The upstream accepted the first attempt: the answer is held from now on, nothing of it written. */
  hold(): void;
  /** The front end had to commit its response to keep it alive: a failure is then written in the stream. */
  readonly committed: boolean;
  /** The hold ended in a failure answered with its status: the connection needs no more keep-alive. */
  stopKeepAlive(): void;
}

/**
 * One chat turn end to end, without HTTP: resolve the model → context management → agent queue
 * → adapter → the front end's renderer, with telemetry recorded once. Failures before the
 * upstream accepted the turn are thrown as GatewayError for the front end to answer; the queue
 * slot is released on every path; the adapter's events are closed in one `finally`, whether or
 * not the renderer iterated them, so no upstream turn or timer outlives its request.
 */
@Injectable()
export class ChatOrchestrator {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly registry: ProviderRegistry,
    private readonly queue: AgentQueueService,
    private readonly metrics: GatewayMetrics,
    private readonly validator: OutputValidator,
    private readonly aliases: ConversationAliases,
  ) {}

  /** `keepAlive`: a streamed front end's, for an answer the gateway holds (none for one JSON body). */
  async run<T>(command: ChatCommand, render: TurnRenderer<T>, keepAlive?: HeldAnswerKeepAlive): Promise<T> {
    const telemetry = new ChatTelemetry(this.metrics, command.logger, command.arrivedAt, {
      stream: command.request.stream,
      requestedModel: command.request.model,
    });
    // One async function from the front end to the adapter (the turn and its failure), not one per step.
    try {
      const { request, client, requestId, logger } = command;
      const { signal } = client;
      const route = this.registry.resolve(request.model, {
        reasoningEffort: request.reasoningEffort,
        verbosity: request.verbosity,
      });
      telemetry.modelResolved(route.model);
      const provider = route.model.provider;
      const fates = parameterFatesOf(provider);
      const parameters = fates.upstream(request.parameters);
      const stop = stopRule(fates, request);
      const json = this.jsonAnswer(fates, request, stop);
      const strict = this.strictTools(fates, request);
      // Only a family that cannot take tool_choice upstream reads it here (the parameter table).
      const choice = fates.enforcesToolChoice ? ToolChoiceRule.of(request.toolChoice, strict) : undefined;
      // While nothing of an answer was written, a strict call its schema refuses has it asked again.
      const refused = strict && ((turn: readonly ChatEvent[]) => strictCallRefused(turn, strict, request));
      const managed = this.manageContext(request, logger);
      const instruction = json?.instruction();
      const messages = instruction ? [...managed, instruction] : managed;
      // What the family can never send (a part, a hosted tool, a history call) is a certain 400:
      // answered before the turn waits in the queue.
      route.adapter.checkContent?.({
        model: route.model,
        messages,
        tools: request.tools,
        normalizedTools: request.normalizedTools,
        faithful: request.faithful,
      });
      const admitted = this.queue.admit({
        provider,
        toolTurn: isToolTurn(request),
        key: command.queueKey,
        signal,
        logger,
        requestId,
      });
      // A turn the queue lets through at once (no tools, or the queue off) awaits nothing here.
      const slot = admitted instanceof Promise ? await admitted : admitted;
      let events: PolledEvents | undefined;
      try {
        const chatRequest: ChatRequest = {
          model: route.model,
          messages,
          tools: request.tools,
          normalizedTools: request.normalizedTools,
          toolChoice: request.toolChoice,
          parallelToolCalls: request.parallelToolCalls,
          faithful: request.faithful,
          sampling: parameters,
          responseFormat: parameters.responseFormat,
          conversationId: this.aliases.upstreamIdentity(command.conversation).value,
        };
        const context = new TurnContext(client, requestId, logger, telemetry);
        const { adapter } = route;
        let seen: AsyncIterable<ChatEvent>;
        if (json || choice || refused) {
          // An answer that may be asked for again; a plain turn calls once, without this closure.
          const call = () =>
            request.stream ? adapter.stream(chatRequest, context) : adapter.complete(chatRequest, context);
          if (!json && !choice && request.stream) {
            events = await call();
            seen = this.streamedToStrictTools(events, refused!, stop, call, signal, telemetry, logger);
          } else {
            try {
              // Held whole for a format or strict calls: with a choice too, a refused call after the
              // one that met it would fail the answer, so the choice alone is held only up to its call.
              if (json || refused)
                seen = await this.heldWhole(json, choice, refused, stop, call, telemetry, logger, keepAlive);
              else {
                const chosen = await this.heldToToolChoice(choice!, stop, call, telemetry, logger, keepAlive);
                events = chosen.events;
                seen = chosen.seen;
              }
            } catch (thrown) {
              seen = heldFailure(thrown, signal, keepAlive);
            }
          }
        } else {
          events = await (request.stream
            ? adapter.stream(chatRequest, context)
            : adapter.complete(chatRequest, context));
          seen = observed(events, telemetry);
          if (stop) seen = stop.cut(seen);
        }
        // A held answer was cut attempt by attempt, before it was judged.
        const { outcome, result } = await render(seen, provider, strict);
        telemetry.countUsage();
        const ended = endedByGateway(signal);
        if (ended && outcome.clientGone) {
          // The drain deadline ended the stream, then its connection closed before the error
          // chunk went out (a client that stopped reading): still the gateway's end, not a cancel.
          telemetry.finished({ status: 200, failure: ended.attributeTo(telemetry.provider) });
        } else if (outcome.clientGone || clientLeft(signal)) {
          telemetry.finished({ status: 499, errorCode: 'canceled' });
        } else {
          this.aliases.remember(command.conversation, outcome.firstToolCallId);
          const { failure } = outcome;
          if (failure?.spec.upstream) telemetry.upstreamError(failure.code);
          telemetry.finished({
            status: 200,
            finishReason: outcome.finishReason,
            failure: failure?.attributeTo(telemetry.provider),
            toolCalls: outcome.toolCalls,
          });
        }
        return result;
      } finally {
        // The one place an accepted turn is closed: a renderer that stopped early, or never
        // started because the client left, still ends the upstream turn and its timers here.
        await events?.return?.().catch(() => undefined);
        slot.release();
      }
    } catch (thrown) {
      throw this.failed(thrown, command.client.signal, telemetry);
    }
  }

  /** A request refused before it became a command (e.g. an invalid body): recorded like any other. */
  rejected(
    thrown: unknown,
    logger: EventLogger,
    arrivedAt: number,
    seen: { readonly model?: string; readonly stream?: boolean } = {},
  ): unknown {
    const telemetry = new ChatTelemetry(this.metrics, logger, arrivedAt, {
      stream: seen.stream ?? false,
      requestedModel: seen.model ?? '',
    });
    return this.failed(thrown, undefined, telemetry);
  }

  /**
   * The checker of a `response_format` this family cannot take upstream (the parameter table), or
   * of a JSON format it can whose answer the gateway's stop cut could break; a schema over the
   * size bounds or refused by Ajv is a 400 before the queue and any upstream call.
   */
  private jsonAnswer(
    fates: FamilyParameterFates,
    request: ParsedChatBody,
    stop: StopRule | undefined,
  ): JsonAnswer | undefined {
    const format = request.parameters.responseFormat;
    if (!format || (!fates.enforcesJson && !stop)) return undefined;
    const json = new JsonAnswer(format, this.validator, !fates.enforcesJson);
    const refusal = json.schemaRefusal();
    if (refusal) throw refusal;
    return json;
  }

  /**
   * The request's strict tools on a family whose upstream does not hold their calls to their
   * schemas (the family's declaration); a schema the gateway cannot check against is a 400 before
   * the queue and any upstream call.
   */
  private strictTools(fates: FamilyParameterFates, request: ParsedChatBody): StrictTools | undefined {
    if (!fates.enforcesStrictTools) return undefined;
    const strict = StrictTools.of(request.normalizedTools, this.validator);
    const refusal = strict?.refusal();
    if (refusal) throw refusal;
    return strict;
  }

  /**
   * Runs the turn until its whole answer, cut at `stop` first, is one the gateway takes: a JSON
   * object `json` accepts (when the format is held), holding the call `choice` asks for (when there
   * is one), and with no call `refused` finds its strict schema refusing; at most MAX_JSON_ATTEMPTS
   * times, writing nothing of it meanwhile (`keepAlive` keeps the connection open from the first
   * acceptance on); every attempt's events are closed here. Returns the accepted answer to render
   * (after the last attempt, one whose refused call the renderer fails with `invalid_tool_call`);
   * throws an upstream failure or, after the last attempt, `output_validation_failed`.
   */
  private async heldWhole(
    json: JsonAnswer | undefined,
    choice: ToolChoiceRule | undefined,
    refused: StrictCallCheck | undefined,
    stop: StopRule | undefined,
    call: () => Promise<PolledEvents>,
    telemetry: ChatTelemetry,
    logger: EventLogger,
    keepAlive: HeldAnswerKeepAlive | undefined,
  ): Promise<AsyncIterable<ChatEvent>> {
    for (let attempt = 1; ; attempt++) {
      const events = await call();
      if (attempt === 1) keepAlive?.hold();
      let verdict: JsonVerdict;
      let unmet: boolean;
      let chosen: ChosenTurn | undefined;
      const matcher = stop && new StopSequenceMatcher(stop.stops);
      try {
        const seen = judged(events, telemetry);
        const turn = await bufferTurn(stop ? stop.cut(seen, matcher) : seen);
        chosen = choice?.select(turn, logger);
        const answer = chosen ? chosen.events : turn;
        verdict = json ? json.judge(answer, matcher?.stopped) : wholeTurn(answer);
        unmet = chosen !== undefined && !chosen.met && verdict.kind !== 'failed' && !turn.some(isRefusalFinish);
      } finally {
        await events.return?.().catch(() => undefined);
      }
      if (verdict.kind === 'failed') throw verdict.error;
      const offSchema = verdict.kind === 'answer' && !unmet && refused?.(verdict.events) === true;
      if (verdict.kind === 'answer' && !unmet && (!offSchema || attempt >= MAX_JSON_ATTEMPTS))
        return observed(replay(verdict.events), telemetry);
      if (offSchema) {
        strictAskedAgain(attempt, telemetry, logger);
        continue;
      }
      telemetry.attemptEnded();
      if (unmet) logger.info({ event: 'chat_tool_choice_unmet', attempt }, 'chat_tool_choice_unmet');
      else logger.info({ event: 'chat_json_invalid', attempt }, 'chat_json_invalid');
      if (attempt >= MAX_JSON_ATTEMPTS) {
        if (unmet) throw choice!.unmet(MAX_JSON_ATTEMPTS, chosen!.offSchema);
        throw formatUnmet(MAX_JSON_ATTEMPTS, matcher?.stopped ?? false);
      }
      telemetry.upstreamRetry('output_validation_failed');
    }
  }

  /**
   * Runs the turn, cut at `stop` first, until it holds the call `choice` asks for, at most MAX_JSON_ATTEMPTS times (the
   * bound of a held response_format), writing nothing of the answer before that call (`keepAlive`
   * keeps the connection open from the first acceptance on); an attempt without it is closed
   * here. Returns the accepted attempt's events (the caller closes them) and the turn to render,
   * from its start; throws an upstream failure or, after the last attempt,
   * `output_validation_failed`.
   */
  private async heldToToolChoice(
    choice: ToolChoiceRule,
    stop: StopRule | undefined,
    call: () => Promise<PolledEvents>,
    telemetry: ChatTelemetry,
    logger: EventLogger,
    keepAlive: HeldAnswerKeepAlive | undefined,
  ): Promise<{ events: PolledEvents; seen: AsyncIterable<ChatEvent> }> {
    for (let attempt = 1; ; attempt++) {
      const events = await call();
      if (attempt === 1) keepAlive?.hold();
      let accepted = false;
      try {
        const seen = judged(events, telemetry);
        const verdict = await choice.hold(stop ? stop.cut(seen) : seen, logger);
        if (verdict.kind === 'failed') throw verdict.error;
        if (verdict.kind === 'answer') {
          accepted = true;
          return { events, seen: observed(verdict.events, telemetry) };
        }
      } finally {
        if (!accepted) await events.return?.().catch(() => undefined);
      }
      telemetry.attemptEnded();
      logger.info({ event: 'chat_tool_choice_unmet', attempt }, 'chat_tool_choice_unmet');
      if (attempt >= MAX_JSON_ATTEMPTS) throw choice.unmet(MAX_JSON_ATTEMPTS);
      telemetry.upstreamRetry('output_validation_failed');
    }
  }

  /**
   * A streamed answer with strict tools the gateway checks (`refused`), cut at `stop` first: its
   * text and reasoning pass on as they come; its tool calls and usage, which the renderer writes
   * only at the end anyway, wait here for the finish. An answer that wrote nothing yet and has a
   * call its strict schema refuses is asked again, like a held one, at most MAX_JSON_ATTEMPTS times;
   * once text went out, or on the last attempt, it goes on as it came and the renderer fails the
   * call. `first` is closed by the caller; every later attempt here.
   */
  private async *streamedToStrictTools(
    first: PolledEvents,
    refused: StrictCallCheck,
    stop: StopRule | undefined,
    call: () => Promise<PolledEvents>,
    signal: AbortSignal,
    telemetry: ChatTelemetry,
    logger: EventLogger,
  ): AsyncGenerator<ChatEvent> {
    let events = first;
    try {
      for (let attempt = 1; ; attempt++) {
        const seen = judged(events, telemetry);
        const waiting: ChatEvent[] = [];
        let written = false;
        let askAgain = false;
        for await (const event of stop ? stop.cut(seen) : seen) {
          if (event.type === 'tool-call' || event.type === 'usage') {
            waiting.push(event);
            continue;
          }
          if (event.type === 'finish' && !written && attempt < MAX_JSON_ATTEMPTS && refused([...waiting, event])) {
            askAgain = true;
            break;
          }
          yield* observedNow(waiting.splice(0), telemetry);
          if ((event.type === 'text-delta' || event.type === 'reasoning-delta') && event.text !== '') written = true;
          yield* observedNow([event], telemetry);
        }
        if (!askAgain) {
          yield* observedNow(waiting, telemetry);
          return;
        }
        strictAskedAgain(attempt, telemetry, logger);
        try {
          events = await call();
        } catch (thrown) {
          // The stream is open: a failure of the attempt asked again is its one error event.
          if (clientLeft(signal)) throw thrown;
          yield { type: 'error', error: toGatewayError(signal.aborted ? signal.reason : thrown) };
          return;
        }
      }
    } finally {
      if (events !== first) await events.return?.().catch(() => undefined);
    }
  }

  /** Context management runs only on requests that carry tools (docs/design/behaviours.md §5). */
  private manageContext(request: ParsedChatBody, logger: EventLogger): readonly ChatMessage[] {
    if (request.tools.length === 0 || !this.config.contextManagement.enabled) return request.messages;
    const result = manageContext(request.messages, this.config.contextManagement);
    if (result.stats) logger.info({ event: 'context_manage', ...result.stats }, 'context_manage');
    return result.messages;
  }

  /**
   * Records a failed turn once and returns what the front end should answer: the abort reason when
   * the client left (or the `canceled` error of a client that left before its body ended), the
   * gateway's own reason when it ended the turn (the drain deadline).
   */
  private failed(thrown: unknown, signal: AbortSignal | undefined, telemetry: ChatTelemetry): unknown {
    // What the upstreams reported was billed, delivered or not (a held answer no attempt satisfied).
    telemetry.countUsage();
    if (clientLeft(signal) || isCanceled(thrown)) {
      telemetry.finished({ status: 499, errorCode: 'canceled' });
      return signal?.reason ?? thrown;
    }
    const error = toGatewayError(signal?.aborted ? signal.reason : thrown).attributeTo(telemetry.provider);
    if (error.spec.upstream) telemetry.upstreamError(error.code);
    const status = error.spec.status;
    // A refusal the client can fix (a 4xx, not a client that left): the line says why, as it was told.
    const reason = status >= 400 && status < 499 ? clientErrorLogFields(error) : undefined;
    // A bug: the one line of the request carries it (`err`: type, message and stack) to report.
    telemetry.finished({ status, failure: error, ...reason, ...(error.code === 'internal' ? { err: thrown } : {}) });
    return error;
  }
}

/** Events given to the client now, measured as `observed` measures them. */
function* observedNow(events: readonly ChatEvent[], telemetry: ChatTelemetry): Generator<ChatEvent> {
  for (const event of events) {
    telemetry.observe(event);
    yield event;
  }
}

/** An attempt dropped for a call its strict schema refused: billed, logged and counted as asked again. */
function strictAskedAgain(attempt: number, telemetry: ChatTelemetry, logger: EventLogger): void {
  telemetry.attemptEnded();
  logger.info({ event: 'chat_strict_call_refused', attempt }, 'chat_strict_call_refused');
  telemetry.upstreamRetry('output_validation_failed');
}

/** Whether an answer has a tool call its strict tool's schema refuses (the request's own rules). */
type StrictCallCheck = (turn: readonly ChatEvent[]) => boolean;

/**
 * Whether the answer would fail for a call its strict tool's schema refuses: read as the renderer's
 * collector reads it (empty calls dropped, only the first with `parallel_tool_calls: false`), and
 * only when that is why it fails. An answer that ended in an upstream error is the error's.
 */
function strictCallRefused(turn: readonly ChatEvent[], strict: StrictTools, request: ParsedChatBody): boolean {
  const collector = new ToolCallCollector('', 'function', {
    strict,
    firstCallOnly: request.parallelToolCalls === false,
  });
  for (const event of turn) {
    if (event.type === 'error') return false;
    if (event.type === 'tool-call') collector.add(event.call);
  }
  return collector.invalidReason === 'off_schema_arguments';
}

/**
 * The gateway's cut at the request's stop sequences, for a family whose upstream cannot stop (the
 * parameter table in chat-parameters.ts); undefined otherwise. A tool call may follow the match when
 * the request offers tools the model may call (its own, or the faithful profile's).
 */
function stopRule(fates: FamilyParameterFates, request: ParsedChatBody): StopRule | undefined {
  const stops = request.parameters.stop;
  if (!stops || !fates.enforcesStop) return undefined;
  return new StopRule(stops, (request.tools.length > 0 || request.faithful) && request.toolChoice !== 'none');
}

/**
 * What becomes of a held answer that failed (every attempt refused, an upstream failure, the drain
 * deadline): for a stream, its one error event, for the renderer to answer as it answers any
 * turn's failure (with its status while nothing was written, in-band once a keep-alive comment
 * committed the headers, and an invalid tool call in-band always); for a JSON body, and whenever
 * the client left, thrown.
 */
function heldFailure(
  thrown: unknown,
  signal: AbortSignal,
  keepAlive: HeldAnswerKeepAlive | undefined,
): AsyncIterable<ChatEvent> {
  if (!keepAlive || clientLeft(signal)) {
    keepAlive?.stopKeepAlive();
    throw thrown;
  }
  // The gateway ended the turn (the drain deadline): its reason is the error the client is told.
  return replay([{ type: 'error', error: toGatewayError(signal.aborted ? signal.reason : thrown) }]);
}

/**
 * The events the client is given as the renderer sees them, measured on the way: time to the
 * first output and the reported usage. A renderer that stops early closes the turn at once, as a
 * `for await` does; the orchestrator's `finally` closes it again for renderers that did not.
 * One object, its own iterator, with its methods on the prototype.
 */
function observed(events: PolledEvents, telemetry: ChatTelemetry): PolledEvents {
  return new ObservedEvents(events, telemetry);
}

/**
 * A held attempt's events as the gateway reads them to judge the answer: only their usage is
 * measured. The client is given nothing of an attempt while it is judged, and never anything of one
 * asked again, so its output is no first token; the accepted answer passes `observed` once it is
 * let through.
 */
function judged(events: PolledEvents, telemetry: ChatTelemetry): PolledEvents {
  return new JudgedEvents(events, telemetry);
}

class ObservedEvents implements PolledEvents {
  /**
   * Made once per turn and handed to every read: `next` chains it onto the turn's own promise
   * instead of awaiting it, so a read waiting on the upstream holds no suspended function here.
   */
  private readonly seen = (step: IteratorResult<ChatEvent>): IteratorResult<ChatEvent> => {
    if (!step.done) this.see(step.value);
    return step;
  };

  constructor(
    private readonly events: PolledEvents,
    protected readonly telemetry: ChatTelemetry,
  ) {}

  next(): Promise<IteratorResult<ChatEvent>> {
    return this.events.next().then(this.seen);
  }

  poll(): ChatEvent | undefined {
    const event = this.events.poll?.();
    if (event !== undefined) this.see(event);
    return event;
  }

  protected see(event: ChatEvent): void {
    this.telemetry.observe(event);
  }

  async return(): Promise<IteratorResult<ChatEvent>> {
    return (await this.events.return?.()) ?? { done: true, value: undefined };
  }

  [Symbol.asyncIterator](): PolledEvents {
    return this;
  }
}

/** A held attempt's events: the same reads, but only their usage is measured (`ChatTelemetry.judged`). */
class JudgedEvents extends ObservedEvents {
  protected override see(event: ChatEvent): void {
    this.telemetry.judged(event);
  }
}

/** The adapter's call context: what it reports of the upstream side goes to the turn's telemetry (methods, not closures). */
class TurnContext implements CallContext {
  readonly signal: AbortSignal;

  constructor(
    readonly controller: AbortController,
    readonly requestId: string,
    readonly logger: EventLogger,
    private readonly telemetry: ChatTelemetry,
  ) {
    this.signal = controller.signal;
  }

  retried(code: string): void {
    this.telemetry.upstreamRetry(code);
  }

  billed(usage: UsageEvent): void {
    this.telemetry.billed(usage);
  }

  attemptDropped(): void {
    this.telemetry.attemptEnded();
  }

  note(fields: Readonly<Record<string, string | number | boolean>>): void {
    this.telemetry.note(fields);
  }
}

/**
 * Everything measured about one chat request, recorded once when it ends: the request counter,
 * duration, time to first token, tokens, upstream errors, the fast-tier counter and one
 * `chat_completion` log line (counts and ids only; never prompts, arguments or output).
 */
class ChatTelemetry {
  /** The arrival on the monotonic clock, so a clock step during the request cannot bend durations. */
  private readonly startedAt: number;
  private firstOutputAt?: number;
  private model?: ResolvedModel;
  private recorded = false;
  private lastUsage?: UsageEvent;
  /** The usage of the attempts that ended before the one observed now (asked again, or dropped). */
  private billedUsage?: UsageEvent;
  /** What the adapter noted about the upstream side (CallContext.note), written on the one line. */
  private upstreamFields?: Readonly<Record<string, string | number | boolean>>;

  constructor(
    private readonly metrics: GatewayMetrics,
    readonly logger: EventLogger,
    arrivedAt: number,
    private readonly request: { readonly stream: boolean; readonly requestedModel: string },
  ) {
    this.startedAt = performance.now() - Math.max(0, Date.now() - arrivedAt);
  }

  /** The family of the request, once its model resolved. */
  get provider(): ResolvedModel['provider'] | undefined {
    return this.model?.provider;
  }

  modelResolved(model: ResolvedModel): void {
    this.model = model;
    if (model.serviceTier === 'priority' && model.catalogId) this.metrics.fastTierRequest(model.catalogId);
  }

  /**
   * Every event the client is given passes here, and no other: the first output (time to first
   * token, docs/endpoints.md) and usage. A held answer's events pass when they are let through.
   */
  observe(event: ChatEvent): void {
    if (event.type === 'usage') this.lastUsage = event.usage;
    else if (
      (event.type === 'tool-call' && !isEmptyToolCall(event.call)) ||
      ((event.type === 'text-delta' || event.type === 'reasoning-delta') && event.text !== '')
    )
      this.firstOutput();
  }

  /**
   * An event of a held attempt while it is judged: its usage only, so an attempt asked again or
   * refused is counted as `attemptEnded` says (the accepted one's usage is the same event when it
   * is let through: kept, not added); its output was given to no one.
   */
  judged(event: ChatEvent): void {
    if (event.type === 'usage') this.lastUsage = event.usage;
  }

  /** An attempt's usage the client never gets (an attempt sent again): counted with the turn's. */
  billed(usage: UsageEvent): void {
    this.billedUsage = this.billedUsage ? addUsage(this.billedUsage, usage) : usage;
  }

  /**
   * The attempt observed so far was not delivered (a held answer asked again, or an attempt that
   * failed before output and was dropped): its last usage joins what was billed, and the next
   * attempt's usage starts afresh.
   */
  attemptEnded(): void {
    if (this.lastUsage) this.billed(this.lastUsage);
    this.lastUsage = undefined;
  }

  /**
   * The tokens the upstreams reported for the turn, counted once when it ended: every attempt's
   * last usage event, the delivered one's and those billed before it.
   */
  countUsage(): void {
    this.attemptEnded();
    const usage = this.billedUsage;
    this.billedUsage = undefined;
    this.usage(usage);
  }

  private firstOutput(): void {
    if (this.firstOutputAt !== undefined) return;
    this.firstOutputAt = performance.now();
    if (this.model) this.metrics.firstToken(this.model.provider, (this.firstOutputAt - this.startedAt) / 1000);
  }

  note(fields: Readonly<Record<string, string | number | boolean>>): void {
    this.upstreamFields = this.upstreamFields ? { ...this.upstreamFields, ...fields } : fields;
  }

  upstreamError(code: string): void {
    if (this.model) this.metrics.upstreamError(this.model.provider, code, 'chat');
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

  /**
   * Records the request once: its metrics and its one `chat_completion` line. A failed request's
   * line is its only one at warn or above (docs/troubleshooting.md "One line per failure"): it
   * carries what the turn's last failure was and its fix (`failureLogFields`), and its level is that
   * failure's own status, error for a 5xx and warn for a 4xx, also after a stream went out as 200.
   */
  finished(fields: {
    status: number;
    finishReason?: string;
    /** The failure answered (a status) or written in-band (an error chunk). */
    failure?: GatewayError;
    /** The code of a request that did not fail (`canceled`: the client left). */
    errorCode?: ErrorCode;
    toolCalls?: number;
    /** A client error's field and message (`clientErrorLogFields`). */
    param?: string;
    error_message?: string;
    /** A bug's own error, for the line (pino's `err` serializer). */
    err?: unknown;
  }): void {
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
    const { failure } = fields;
    // A catalog id is one the gateway serves; any other id the client wrote may hold a pasted key,
    // which a refusal's message may name too (`model "…": the upstream does not know this model`).
    const knownModel = this.model?.catalogId != null;
    const record = {
      event: 'chat_completion',
      provider: this.model?.provider ?? 'none',
      model: loggedModelId(this.request.requestedModel, knownModel),
      stream: this.request.stream,
      status: fields.status,
      finish_reason: fields.finishReason,
      error_code: failure?.code ?? fields.errorCode,
      param: fields.param,
      error_message:
        knownModel || fields.error_message === undefined
          ? fields.error_message
          : redactQuotedSecrets(fields.error_message),
      ...(failure ? failureLogFields(failure) : undefined),
      err: fields.err,
      tool_calls: fields.toolCalls ?? 0,
      duration_ms: Math.round(durationMs),
      ttft_ms: this.firstOutputAt === undefined ? undefined : Math.round(this.firstOutputAt - this.startedAt),
      ...this.upstreamFields,
    };
    // The failure's own status decides, not the one the client got: a stream that failed after its
    // headers went out as 200 is still an error of the request (the one rule: answerLogLevel).
    this.logger[answerLogLevel(failure?.spec.status ?? fields.status, failure?.code ?? fields.errorCode)](
      record,
      'chat_completion',
    );
  }
}

function addUsage(a: UsageEvent, b: UsageEvent): UsageEvent {
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
    cachedPromptTokens: (a.cachedPromptTokens ?? 0) + (b.cachedPromptTokens ?? 0),
    reasoningTokens: (a.reasoningTokens ?? 0) + (b.reasoningTokens ?? 0),
  };
}
