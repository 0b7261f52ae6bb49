import { sleep } from '../../common/async/abortable';
import type { UpstreamProxy } from '../../common/egress/upstream-proxy';
import type { ProviderBCredential } from '../../accounts/provider-b/provider-b.auth';
import type { ProviderBLogin } from '../../accounts/provider-b/provider-b.accounts';
import type { ChatEvent } from '../../core/chat-event';
import { GatewayError } from '../../core/gateway.error';
import type { CallContext, ChatRequest } from '../shared/provider-adapter';
import { LoginTokenTurn } from '../shared/login-rejection';
import { unreadableFrame } from '../shared/unreadable-frame';
import type { SsePayload } from '../shared/sse-event-parser';
import { parseSseJson } from '../shared/sse-event-parser';
import type { AttemptInfo, FailureContext, FrameStep, UpstreamAttempt, UpstreamFamily } from '../shared/turn-runner';
import type { CodeAssistClient, OpenedResponse, TurnScope } from './provider-b.http';
import { callCodeAssist, postCodeAssist, readJsonResponse } from './provider-b.http';
import type { DiscoveryTransport, ProviderBProjectResolver } from './provider-b.project';
import type { BuiltProviderBRequest } from './provider-b.request';
import { buildProviderBRequest, cliModelId } from './provider-b.request';
import { classifyProviderBFailure } from './provider-b.errors';
import type { ProviderBStreamState } from './provider-b.stream';
import { createProviderBStreamState, finishProviderBStream, translateProviderBPayload } from './provider-b.stream';
import type { ThoughtSignatureStore } from './provider-b.thought-signatures';
import type { EventLogger } from '../../core/event-logger';
import type { PlanReport } from '../../core/plan-usage';
import { planReportFromQuota } from './provider-b.quota';
import {
  endsWithToolResults,
  INVALID_TURN_RETRY,
  invalidTurnReason,
  showsText,
  withRetryNudge,
} from './provider-b.empty-turn';

/**
 * provider_b's attempts as the turn runner reads them (docs/upstream/provider-b.md §9): the SSE payloads of one
 * `streamGenerateContent` call (or the one body of `generateContent`), and what each means.
 */
export interface ProviderBAttempt extends UpstreamAttempt<SsePayload> {
  readonly stream: ProviderBStreamState;
  /**
   * Reasoning, and text that shows nothing yet, held back until the turn shows something (a
   * retried turn's reasoning or blank text is never sent).
   */
  readonly held: ChatEvent[];
  /** The text held so far, judged whole as the CLI judges an answer's text (`showsText`). */
  heldText: string;
  visible: boolean;
  /** A tool call with a thought signature was emitted (the adapter remembers it, docs/upstream/provider-b.md §8). */
  readonly onToolCall: (callId: string, signature: string) => void;
  /** The request ended with tool results: an empty answer to them is accepted (docs/upstream/provider-b.md §9.3). */
  readonly afterToolResults: boolean;
}

export interface AttemptShape {
  readonly streaming: boolean;
  readonly customToolNames: ReadonlySet<string>;
  readonly toolNames: BuiltProviderBRequest['toolNames'];
  readonly requestId: string;
  readonly onToolCall: (callId: string, signature: string) => void;
  readonly afterToolResults: boolean;
}

/** What every provider_b turn shares: the endpoint, the proxy and the process-wide memories. */
export interface ProviderBConnect {
  readonly baseUrl: string;
  readonly proxy: UpstreamProxy;
  /** The Code Assist project of each login, discovered once. */
  readonly projects: ProviderBProjectResolver;
  /** The thought signatures of past tool calls, sent back with their calls. */
  readonly signatures: ThoughtSignatureStore;
  /** `signatures.remember`, made once for every attempt. */
  readonly rememberSignature: (callId: string, signature: string) => void;
}

export type ProviderBMethod = 'streamGenerateContent' | 'generateContent';

/** One attempt's call, built for its login: the client with the login's token, and the envelope for its project. */
export interface ProviderBRequest extends Pick<BuiltProviderBRequest, 'envelope' | 'customToolNames' | 'toolNames'> {
  readonly client: CodeAssistClient;
  /** The client's contents end with tool results (a nudge after them does not change that). */
  readonly afterToolResults: boolean;
}

/**
 * provider_b as an upstream family of the turn runner (docs/architecture.md "The family contract"): an attempt is the login
 * token, the project (discovered once per login), the body and one Code Assist call; a 401 gets
 * one forced refresh of the login through `reopenAfter`.
 */
export class ProviderBUpstream implements UpstreamFamily<
  ProviderBLogin,
  SsePayload,
  ProviderBAttempt,
  ProviderBRequest
> {
  readonly provider = 'provider_b' as const;
  readonly emptyTurnRetry = INVALID_TURN_RETRY;
  private readonly login: LoginTokenTurn<ProviderBCredential>;
  /** Why the last attempt that ended showing nothing was invalid: the next attempts carry its nudge. */
  private invalid?: string;

  constructor(
    private readonly connect: ProviderBConnect,
    private readonly chat: ChatRequest,
    private readonly context: CallContext,
    private readonly method: ProviderBMethod,
  ) {
    this.login = new LoginTokenTurn('provider_b', context.logger);
  }

  /** The login's token, its project (discovered once per login) and the envelope built for them. */
  async request(attempt: AttemptInfo<ProviderBLogin>, signal: AbortSignal): Promise<ProviderBRequest> {
    const { connect, chat, context, method } = this;
    const credential = await this.login.token(attempt.login.tokens, signal);
    const client: CodeAssistClient = {
      baseUrl: connect.baseUrl,
      accessToken: credential.accessToken,
      turn: { signal, deadlineAt: attempt.deadlineAt },
      logger: context.logger,
      model: cliModelId(chat.model),
      proxy: connect.proxy,
    };
    const project = await connect.projects.resolve(credential.loginKey, discoveryTransport(client));
    const built = buildProviderBRequest(chat, {
      project,
      userPromptId: context.requestId,
      signatureFor: (id) => connect.signatures.lookup(id),
    });
    const { cancelledToolCalls, orphanToolResults, unresolvedRefs, renamedToolNames } = built.report;
    if (cancelledToolCalls + orphanToolResults + unresolvedRefs + renamedToolNames > 0) {
      context.logger.debug(
        {
          event: 'provider_b_request_adjusted',
          cancelledToolCalls,
          orphanToolResults,
          unresolvedRefs,
          renamedToolNames,
        },
        'provider_b_request_adjusted',
      );
    }
    const contents = withRetryNudge(built.envelope.request.contents, this.invalid);
    const envelope = { ...built.envelope, request: { ...built.envelope.request, contents } };
    context.logger.debug(
      { event: 'provider_b_attempt', method, attempt: attempt.number, contents: contents.length },
      'provider_b_attempt',
    );
    return {
      client,
      envelope,
      customToolNames: built.customToolNames,
      toolNames: built.toolNames,
      afterToolResults: endsWithToolResults(built.envelope.request.contents),
    };
  }

  /** The Code Assist call; a non-2xx rejects with its `UpstreamRefusal`. */
  async send(call: ProviderBRequest): Promise<ProviderBAttempt> {
    const { client } = call;
    const opened = await postCodeAssist(client, this.method, call.envelope);
    return providerBAttempt(opened, client.turn, {
      streaming: this.method === 'streamGenerateContent',
      customToolNames: call.customToolNames,
      toolNames: call.toolNames,
      requestId: this.context.requestId,
      onToolCall: this.connect.rememberSignature,
      afterToolResults: call.afterToolResults,
    });
  }

  /** A refusal by its status and body (a quota read against `atMs`), anything else a transport error. */
  classify(failure: unknown, { atMs }: FailureContext<ProviderBLogin>): GatewayError {
    return classifyProviderBFailure(failure, atMs, this.context.logger);
  }

  translate(payload: SsePayload, attempt: ProviderBAttempt): FrameStep {
    return translatePayload(payload, attempt);
  }

  end(attempt: ProviderBAttempt): FrameStep {
    const step = endOfPayloads(attempt);
    if (step.again !== undefined) this.invalid = step.again;
    return step;
  }

  held(attempt: ProviderBAttempt): readonly ChatEvent[] {
    return attempt.held;
  }

  reopenAfter(failure: GatewayError): boolean {
    return this.login.reopenAfter(failure);
  }
}

/**
 * One read of the login's quota as the Gemini CLI's `/stats` reads it (docs/upstream/provider-b.md §14):
 * `POST :retrieveUserQuota` with the login's project, as a plan report. Outside any turn:
 * its own token, signal and a deadline of its own; the project is the one turns use (discovered once).
 */
export async function readProviderBUsage(
  connect: Pick<ProviderBConnect, 'baseUrl' | 'proxy' | 'projects'>,
  login: ProviderBLogin,
  model: string,
  signal: AbortSignal,
  logger: EventLogger,
): Promise<PlanReport | undefined> {
  const credential = await login.tokens.current(signal, logger);
  const client: CodeAssistClient = {
    baseUrl: connect.baseUrl,
    accessToken: credential.accessToken,
    turn: { signal, deadlineAt: Infinity },
    logger,
    model,
    proxy: connect.proxy,
  };
  let body: unknown;
  try {
    const project = await connect.projects.resolve(credential.loginKey, discoveryTransport(client));
    body = await readJsonResponse(await postCodeAssist(client, 'retrieveUserQuota', { project }), client.turn);
  } catch (error) {
    // Outside a turn there is no runner: the failure is read against the time it is met.
    throw signal.aborted ? error : classifyProviderBFailure(error, Date.now(), logger);
  }
  return planReportFromQuota(body);
}

/** Project discovery's calls, on the attempt's token and signal. */
function discoveryTransport(client: CodeAssistClient): DiscoveryTransport {
  return {
    call: async (method, body) => readJsonResponse(await postCodeAssist(client, method, body), client.turn),
    getOperation: async (operation) => readJsonResponse(await callCodeAssist(client, { operation }), client.turn),
    wait: (ms) => sleep(ms, client.turn.signal),
    deadlineAt: client.turn.deadlineAt,
    signal: client.turn.signal,
    logger: client.logger,
  };
}

/** The attempt over an accepted (2xx) response; `generateContent`'s whole body is read here. */
async function providerBAttempt(
  opened: OpenedResponse,
  scope: TurnScope,
  shape: AttemptShape,
): Promise<ProviderBAttempt> {
  const stream = createProviderBStreamState(shape.customToolNames, shape.toolNames, shape.requestId);
  const base = {
    stream,
    held: [],
    heldText: '',
    visible: false,
    onToolCall: shape.onToolCall,
    afterToolResults: shape.afterToolResults,
  };
  if (!shape.streaming) {
    const body = await readJsonResponse(opened, scope);
    let read = false;
    const frames: AsyncIterator<SsePayload> = {
      next: () => {
        const done = read;
        read = true;
        return Promise.resolve(
          done ? { done: true, value: undefined } : { done: false, value: { ok: true, value: body } },
        );
      },
    };
    return { ...base, frames, close: () => opened.abort() };
  }
  const frames = parseSseJson(opened.response.body ?? emptyBytes());
  return {
    ...base,
    frames,
    close: async () => {
      // Abort first so a read still pending on the socket ends at once; then unwind the parsers.
      opened.abort();
      await frames.return(undefined).catch(() => undefined);
    },
  };
}

/** One payload's step (an error payload handed over for `classify`), with reasoning held back until the turn shows something visible. */
function translatePayload(payload: SsePayload, attempt: ProviderBAttempt): FrameStep {
  if (!payload.ok) return unreadableFrame('provider_b', 'non-JSON stream data');
  const step = translateProviderBPayload(payload.value, attempt.stream);
  if (step.failure || step.unclassified) return step;
  const events: ChatEvent[] = [];
  for (const event of step.events) {
    if (
      !attempt.visible &&
      (event.type === 'reasoning-delta' || (event.type === 'text-delta' && !shows(attempt, event.text)))
    ) {
      attempt.held.push(event);
      continue;
    }
    if (!attempt.visible) {
      attempt.visible = true;
      events.push(...attempt.held.splice(0));
    }
    if (event.type === 'tool-call' && event.call.id && event.call.thoughtSignature)
      attempt.onToolCall(event.call.id, event.call.thoughtSignature);
    events.push(event);
  }
  return { events, accepted: true };
}

/** Whether the text held so far and `text` show anything; only read until the turn shows something. */
function shows(attempt: ProviderBAttempt, text: string): boolean {
  attempt.heldText += text;
  return showsText(attempt.heldText);
}

/**
 * End of the payloads (docs/upstream/provider-b.md §9.3): usage and finish; a turn that showed
 * nothing and that the CLI counts as invalid asks to be sent again.
 */
function endOfPayloads(attempt: ProviderBAttempt): FrameStep {
  const { stream, held } = attempt;
  if (stream.frames === 0)
    return {
      events: [],
      failure: new GatewayError('upstream', { detail: 'provider_b empty response', retryable: true }),
    };
  const tail = finishProviderBStream(stream);
  if (attempt.visible) return { events: tail, terminal: true };
  const thoughts = held.some((event) => event.type === 'reasoning-delta');
  const invalid = invalidTurnReason(stream, thoughts, attempt.afterToolResults);
  if (invalid === undefined) return { events: [...held, ...tail], terminal: true };
  return { events: [...held, ...tail], again: invalid };
}

async function* emptyBytes(): AsyncGenerator<Uint8Array> {
  // A 2xx without a body reads as an empty stream.
}
