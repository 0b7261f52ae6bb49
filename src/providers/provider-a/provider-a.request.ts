import { sha256Hex, uuidFromHex } from '../../common/hashing';
import type { ResolvedModel } from '../../core/resolved-model';
import type { ChatRequest, ResponseFormat } from '../provider-adapter';
import { customToolNames, normalizeTools } from '../shared/tool-definitions';
import { DEFAULT_INSTRUCTIONS } from './provider-a.constants';
import type { FaithfulProfile } from './provider-a.faithful-profile';
import { scaffoldForToday } from './provider-a.faithful-profile';
import { windowIdFor } from './provider-a.identifiers';
import { conversationInput, pairCallsWithOutputs } from './provider-a.input-items';
import type { ToolNameMap } from './provider-a.tools';
import { responsesToolChoice, responsesTools, withUpstreamToolNames } from './provider-a.tools';

type Json = Record<string, unknown>;

/** The ids of one upstream attempt in faithful mode (provider_a.md §3). */
export interface FaithfulTurn {
  readonly profile: FaithfulProfile;
  readonly turnId: string;
  readonly installationId: string;
  /** The turn metadata string of this attempt (`turnMetadata`), also sent as a header. */
  readonly turnMetadata: string;
  readonly now: Date;
  readonly timeZone: string;
}

export interface ChatBodyOptions {
  /** UUID-formatted session id of the chat (`prompt_cache_key`). */
  readonly sessionId: string;
  /** Present only when the request asked for faithful mode. */
  readonly faithful?: FaithfulTurn;
}

export interface ChatBody {
  readonly body: Json;
  /** Counts for the debug log (never the content). */
  readonly orphanToolMessages: number;
  /** Calls without an output that got an `aborted` one, and outputs without a call, dropped. */
  readonly abortedCalls: number;
  readonly orphanOutputs: number;
  /** Client tool name ↔ upstream name (names the backend would reject are shortened). */
  readonly toolNames: ToolNameMap;
}

/** `reasoning` from the resolved effort (§8); `extra` adds e.g. `summary: "auto"`. */
export function reasoningField(model: ResolvedModel, extra: Json = {}): Json {
  return model.reasoningEffort ? { effort: model.reasoningEffort, ...extra } : { ...extra };
}

/** What the turn metadata of one faithful attempt is made of. */
export interface TurnMetadataInput {
  readonly sessionId: string;
  readonly turnId: string;
  readonly installationId: string;
  readonly model: ResolvedModel;
  readonly startedAtMs: number;
}

/**
 * The turn metadata string (§5.2) with the members and order Codex CLI 0.169.0 sends
 * (test/fixtures/codex-oracle/): compact JSON. The values describe a fresh `codex exec` turn on a
 * Mac (the faithful User-Agent's platform, hence the `seatbelt` sandbox) with a read-only sandbox
 * and analytics off; the context window id is derived from the session so it is stable per chat.
 */
export function turnMetadata(input: TurnMetadataInput): string {
  const { sessionId, turnId } = input;
  return JSON.stringify({
    installation_id: input.installationId,
    session_id: sessionId,
    thread_id: sessionId,
    agent_name: '/root',
    turn_id: turnId,
    window_id: windowIdFor(sessionId),
    window_number: 0,
    context_window_id: uuidFromHex(sha256Hex(`provider_a.context_window:${sessionId}`)),
    request_kind: 'turn',
    history_initialization: 'new',
    root_turn_id: turnId,
    thread_source: 'user',
    turn_trigger: 'exec',
    sandbox: 'seatbelt',
    sandbox_mode: 'read-only',
    auto_review_enabled: false,
    node_repl_auto_review_required: false,
    node_repl_disabled: false,
    turn_started_at_unix_ms: input.startedAtMs,
    analytics_enabled: false,
    model: input.model.upstreamModel,
    reasoning_effort: input.model.reasoningEffort ?? 'none',
  });
}

/**
 * Pure: ChatRequest → Responses body for chat (provider_a.md §5). Minimal mode forwards the
 * client's tools; faithful mode replaces instructions and tools with the profile's. Never sent:
 * `max_output_tokens`, `temperature`, `top_p` (the backend refuses them; src/chat/chat-parameters.ts
 * documents their fate), and a `tool_choice` the client did not send.
 */
export function buildChatBody(request: ChatRequest, options: ChatBodyOptions): ChatBody {
  const conversation = conversationInput(request.messages, customToolNames(normalizeTools(request.tools)));
  const clientTools = options.faithful !== undefined ? [] : responsesTools(request.tools);
  const faithful = options.faithful;
  let instructions: string;
  let input: Json[];
  if (faithful) {
    const developer =
      conversation.systemTexts.length > 0
        ? [
            {
              type: 'message',
              role: 'developer',
              content: conversation.systemTexts.map((text) => ({ type: 'input_text', text })),
            },
          ]
        : [];
    instructions = faithful.profile.instructions;
    input = [
      ...scaffoldForToday(faithful.profile.scaffold, faithful.now, faithful.timeZone),
      ...developer,
      ...conversation.items,
    ];
  } else {
    instructions = conversation.systemTexts.length > 0 ? conversation.systemTexts.join('\n\n') : DEFAULT_INSTRUCTIONS;
    input = conversation.items;
  }
  // Before every request, as the Codex CLI does: the backend rejects unpaired calls and outputs.
  const paired = pairCallsWithOutputs(input);
  input = paired.items;
  const body: Json = {
    model: request.model.upstreamModel,
    instructions,
    input,
    stream: true,
    store: false,
    reasoning: reasoningField(request.model, { summary: 'auto' }),
  };
  const text = textField(request.model.verbosity, request.responseFormat);
  if (text) body.text = text;
  body.prompt_cache_key = options.sessionId;
  if (request.model.serviceTier) body.service_tier = request.model.serviceTier;

  if (faithful) {
    body.tools = [...faithful.profile.tools];
    body.tool_choice = faithful.profile.toolChoice;
    body.parallel_tool_calls = faithful.profile.parallelToolCalls;
    body.include = [...faithful.profile.include];
    body.client_metadata = {
      session_id: options.sessionId,
      thread_id: options.sessionId,
      turn_id: faithful.turnId,
      root_turn_id: faithful.turnId,
      'x-codex-installation-id': faithful.installationId,
      'x-codex-window-id': windowIdFor(options.sessionId),
      'x-codex-turn-metadata': faithful.turnMetadata,
    };
  } else if (clientTools.length > 0) {
    body.tools = clientTools;
    if (request.toolChoice !== undefined) body.tool_choice = responsesToolChoice(request.toolChoice);
    if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;
  }
  const named = withUpstreamToolNames(body);
  return {
    body: named.body,
    orphanToolMessages: conversation.orphanToolMessages,
    abortedCalls: paired.abortedCalls,
    orphanOutputs: paired.orphanOutputs,
    toolNames: named.names,
  };
}

/**
 * `text`: the verbosity and, when the client asked for JSON, `format` exactly as Codex CLI 0.169.0
 * sends it for `codex exec --output-schema` (test/fixtures/codex-oracle/*.output-schema.capture.json):
 * `{type: "json_schema", strict, schema, name}`, with the client's name, schema and strictness.
 */
export function textField(verbosity: string | null | undefined, format: ResponseFormat | undefined): Json | undefined {
  if (!verbosity && !format) return undefined;
  const text: Json = {};
  if (verbosity) text.verbosity = verbosity;
  if (format?.type === 'json_schema') {
    text.format = {
      type: 'json_schema',
      strict: format.strict,
      schema: format.schema,
      name: format.name,
      ...(format.description !== undefined ? { description: format.description } : {}),
    };
  } else if (format?.type === 'json_object') {
    text.format = { type: 'json_object' };
  }
  return text;
}

/**
 * The one WebSocket text frame: the body plus `type: "response.create"`, and in faithful mode
 * the moment the frame is sent (`x-codex-ws-stream-request-start-ms`).
 */
export function websocketFrame(body: Json, sentAtMs: number): Json {
  const frame: Json = { type: 'response.create', ...body };
  const metadata = body.client_metadata;
  if (typeof metadata === 'object' && metadata !== null) {
    frame.client_metadata = { ...metadata, 'x-codex-ws-stream-request-start-ms': String(sentAtMs) };
  }
  return frame;
}
