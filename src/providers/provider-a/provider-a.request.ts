import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { v7 as uuidv7 } from 'uuid';
import { sha256Hex, uuidFromHex } from '../../common/hashing';
import type { ProviderAWire } from './provider-a.settings';
import type { ToolDefinition } from '../../core/chat-message';
import { customToolNames } from '../../core/chat-message';
import type { GatewayError } from '../../core/gateway.error';
import type { ResolvedModel } from '../../core/resolved-model';
import type { UpstreamModelInfo } from '../../models/upstream-model-info';
import type { ChatRequest, ResponseFormat } from '../shared/provider-adapter';
import { unusableToolRefusal } from '../shared/hosted-tools';
import type { ProviderACredentials } from '../../accounts/provider-a/provider-a.auth';
import type { CodexClient } from './provider-a.client';
import {
  CODEX_BETA_FEATURES,
  CODEX_ORIGINATOR,
  DEFAULT_INSTRUCTIONS,
  OPENAI_BETA_WEBSOCKET,
} from './provider-a.constants';
import type { FaithfulProfile } from './provider-a.faithful-profile';
import { scaffoldForToday } from './provider-a.faithful-profile';
import type { ToolNameMap } from '../shared/tool-names';
import {
  conversationInput,
  responsesToolChoice,
  responsesTools,
  withUpstreamToolNames,
} from './provider-a.input-items';
import type { ProviderATransportKind } from './provider-a.transport';
import { quoted } from '../../core/quoted';

/*
 * One provider_a attempt as the backend receives it (docs/upstream/provider-a.md §3–§5): what identifies it
 * upstream (the chat's session id, turn and window ids, the installation id) and the handshake or
 * POST headers that carry them; the Responses body built from the chat request; and that body in
 * the shape the model takes (classic or Responses lite). What the messages and tools become on
 * the wire lives in provider-a.input-items.ts.
 */

type Json = Record<string, unknown>;

// Identity and headers ----------------------------------------------------------------------------

/**
 * The session id of one chat: stable for every turn of the chat, distinct across chats, so the
 * backend can reuse its prompt cache (`prompt_cache_key`, `session-id`, faithful `thread-id`).
 * Derivation (docs/providers.md "Conversation identity"): UUID-formatted SHA-256 of
 * `provider_a.prompt_cache_key:` + the conversation id. Changing it cools every upstream cache.
 */
export function sessionIdForChat(conversationId: string): string {
  return uuidFromHex(sha256Hex(`provider_a.prompt_cache_key:${conversationId}`));
}

/**
 * The structured route's cache key (docs/upstream/provider-a.md §6.4), derived as: UUID-formatted SHA-256
 * of `provider_a.structured:` + the extraction's conversation id (caller, operation and schema
 * checksum, one per line).
 */
export function structuredPromptCacheKey(conversationId: string): string {
  return uuidFromHex(sha256Hex(`provider_a.structured:${conversationId}`));
}

/** A fresh turn id per upstream attempt (UUIDv7: time-ordered, like the CLI's). */
export function newTurnId(): string {
  return uuidv7();
}

/** The faithful window id of a session. */
export function windowIdFor(sessionId: string): string {
  return `${sessionId}:0`;
}

/**
 * The installation id (docs/upstream/provider-a.md §3): `$CODEX_HOME/installation_id` trimmed, else
 * a random UUIDv4 that is never written to disk. The adapter reads it once, at startup.
 */
export function readInstallationId(codexHome: string): string {
  try {
    const value = fs.readFileSync(path.join(codexHome, 'installation_id'), 'utf8').trim();
    if (value !== '') return value;
  } catch {
    // No file (or an unreadable one): the Codex CLI would make one up too; ours lives only in memory.
  }
  return randomUUID();
}

export interface FaithfulHeaderInput {
  /** The turn metadata string (docs/upstream/provider-a.md §5.2). */
  readonly turnMetadata: string;
}

/**
 * Handshake (WebSocket) or POST (SSE) headers of one attempt (docs/upstream/provider-a.md §4.1, §4.2): the
 * minimal set always, the faithful extras only in faithful mode. As Codex CLI 0.171.0 sends them
 * (test/fixtures/codex-oracle/): only the WebSocket carries `openai-beta`, only the POST
 * `accept-encoding`; both spell the session header `session-id`.
 */
export function upstreamHeaders(
  transport: ProviderATransportKind,
  client: CodexClient,
  credentials: ProviderACredentials,
  sessionId: string,
  faithful?: FaithfulHeaderInput,
): Record<string, string> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${credentials.accessToken}`,
    'chatgpt-account-id': credentials.accountId,
    originator: CODEX_ORIGINATOR,
    'user-agent': faithful ? client.userAgentFaithful : client.userAgentMinimal,
    'session-id': sessionId,
  };
  if (transport === 'ws') headers['openai-beta'] = OPENAI_BETA_WEBSOCKET;
  if (faithful) {
    headers['x-codex-beta-features'] = CODEX_BETA_FEATURES;
    // The CLI sends its thread (session) id here, not the turn id.
    headers['x-client-request-id'] = sessionId;
    headers['thread-id'] = sessionId;
    headers['x-codex-window-id'] = windowIdFor(sessionId);
    headers['x-codex-turn-metadata'] = faithful.turnMetadata;
  }
  if (transport === 'sse') {
    headers['content-type'] = 'application/json';
    headers.accept = 'text/event-stream';
    headers['accept-encoding'] = client.acceptEncoding;
  }
  return headers;
}

// The body ----------------------------------------------------------------------------------------

/** The ids of one upstream attempt in faithful mode (docs/upstream/provider-a.md §3). */
export interface FaithfulTurn {
  readonly profile: FaithfulProfile;
  readonly turnId: string;
  readonly installationId: string;
  /** The turn metadata string of this attempt (`turnMetadata`), also sent as a header. */
  readonly turnMetadata: string;
  readonly now: Date;
  readonly timeZone: string;
  /** The shape the body goes in (`parallel_tool_calls` follows it, `faithfulParallelToolCalls`). */
  readonly shape: WireShape;
}

export interface ChatBodyOptions {
  /** UUID-formatted session id of the chat (`prompt_cache_key`). */
  readonly sessionId: string;
  /** Present only when the request asked for faithful mode. */
  readonly faithful?: FaithfulTurn;
  /** What the catalog knows about the upstream model (the live list's per-model flags). */
  readonly info?: UpstreamModelInfo;
}

export interface ChatBody {
  readonly body: Json;
  /** Counts for the debug log (never the content): calls without an output that got an `aborted` one, and outputs without a call, dropped. */
  readonly abortedCalls: number;
  readonly orphanOutputs: number;
  /** Client tool name ↔ upstream name (names the backend would reject are shortened). */
  readonly toolNames: ToolNameMap;
}

/** `reasoning` from the resolved effort (docs/upstream/provider-a.md §8); `extra` adds e.g. `summary: "auto"`. */
export function reasoningField(model: ResolvedModel, extra: Json = {}): Json {
  return model.reasoningEffort ? { effort: model.reasoningEffort, ...extra } : { ...extra };
}

/**
 * `reasoning.summary`, as Codex CLI 0.171.0 decides it from the model list
 * (test/fixtures/codex-oracle/*.models-served.summary-*.capture.json, …no-summary-parameter…):
 * none for a model marked `supports_reasoning_summary_parameter: false`; else the model's
 * `default_reasoning_summary`. Where that is `none` or unknown (every model of the 0.171.0
 * list), `auto`, which the CLI sends with `model_reasoning_summary = "auto"`: reasoning
 * summaries are how clients get `reasoning_content`.
 */
export function summaryField(info: UpstreamModelInfo | undefined): Json {
  if (info?.supportsReasoningSummary === false) return {};
  const summary = info?.defaultReasoningSummary;
  return { summary: summary === undefined || summary === 'none' ? 'auto' : summary };
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
 * The turn metadata string (docs/upstream/provider-a.md §5.2) with the members and order Codex CLI 0.171.0 sends
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
 * Pure: ChatRequest → Responses body for chat (docs/upstream/provider-a.md §5). Minimal mode forwards the
 * client's tools; faithful mode replaces instructions and tools with the profile's. Never sent:
 * `max_output_tokens`, `temperature`, `top_p` (the backend refuses them; src/chat/chat-request.parser.ts
 * documents their fate), and a `tool_choice` the client did not send.
 */
export function buildChatBody(request: ChatRequest, options: ChatBodyOptions): ChatBody {
  const customNames = customToolNames(request.normalizedTools);
  const conversation = conversationInput(request.messages, customNames);
  const clientTools = options.faithful !== undefined ? [] : responsesTools(request.tools, request.normalizedTools);
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
  const body: Json = {
    model: request.model.upstreamModel,
    instructions,
    input,
    stream: true,
    store: false,
    reasoning: reasoningField(request.model, summaryField(options.info)),
  };
  // A model the list marks `support_verbosity: false` gets none, as from the CLI, even when asked.
  const verbosity = options.info?.supportsVerbosity === false ? null : request.model.verbosity;
  const text = textField(verbosity, request.responseFormat);
  if (text) body.text = text;
  body.prompt_cache_key = options.sessionId;
  if (request.model.serviceTier) body.service_tier = request.model.serviceTier;

  if (faithful) {
    body.tools = [...faithful.profile.tools];
    body.tool_choice = faithful.profile.toolChoice;
    body.parallel_tool_calls = faithfulParallelToolCalls(faithful.profile, faithful.shape);
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
    if (request.toolChoice !== undefined) body.tool_choice = responsesToolChoice(request.toolChoice, customNames);
    if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;
  }
  const named = withUpstreamToolNames(body);
  return {
    body: named.body,
    abortedCalls: conversation.abortedCalls,
    orphanOutputs: conversation.orphanOutputs,
    toolNames: named.names,
  };
}

/**
 * Faithful `parallel_tool_calls`: `false` in the lite shape, the profile's in the classic one.
 * Codex CLI 0.171.0 sends `false` exactly when it sends a model the lite shape, whatever its
 * settings and the list's `tool_mode` say (test/fixtures/codex-oracle/: the gpt-6.1-sol captures,
 * and the `classic-shape` and `no-tool-mode` ones against a list that changed either).
 */
export function faithfulParallelToolCalls(profile: FaithfulProfile, shape: WireShape): boolean {
  return shape === 'lite' ? false : profile.parallelToolCalls;
}

/**
 * `text`: the verbosity and, when the client asked for JSON, `format` exactly as Codex CLI 0.171.0
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

// The request shape per model ---------------------------------------------------------------------

/**
 * The two request shapes of the Codex backend (docs/providers.md "Two request shapes"). Codex
 * CLI 0.171.0 sends "Responses lite" to every model its list marks `use_responses_lite`
 * (test/fixtures/codex-oracle/codex-0.171.0.gpt-6.1-sol*.capture.json) and the classic shape to
 * the others; the backend refuses a mix with 400 (the flag on a classic model, the flag without
 * `reasoning.context: "all_turns"`, top-level or hosted tools under the flag).
 */
export type WireShape = 'classic' | 'lite';

/** The flag, as a WebSocket `client_metadata` key and as an HTTP header (the CLI's spelling of each). */
export const LITE_METADATA_KEY = 'ws_request_header_x_openai_internal_codex_responses_lite';
export const LITE_HEADER = 'x-openai-internal-codex-responses-lite';

/** PROVIDER_A_WIRE `auto` follows the model list (live, else bundled); a model it does not know is classic. */
export function wireShapeFor(setting: ProviderAWire, info: UpstreamModelInfo | undefined): WireShape {
  if (setting !== 'auto') return setting;
  return info?.responsesLite === true ? 'lite' : 'classic';
}

/** Tool types the lite `functions` namespace carries; a namespace travels as its own entry. */
const NAMESPACED_TYPES = new Set(['function', 'custom']);

/** What the lite shape carries: function and custom tools (in `functions`) and namespaces; no hosted tool. */
const carriedUnderLite = (type: string) => NAMESPACED_TYPES.has(type) || type === 'namespace';

/**
 * 400 `invalid_request` (`param: "tools"`) for the first tool of the client's own that the lite
 * shape cannot carry (a hosted tool: `web_search`…), else `undefined`: the backend refuses hosted
 * tools under the lite flag. `modelId` is the id the client asked for; `classicModels` gives the
 * models that take the classic shape now (where a hosted tool goes), for the way out: asked, and
 * the message built, only for a refusal, since every turn of a lite model passes here.
 */
export function hostedToolRefusal(
  tools: readonly ToolDefinition[],
  modelId: string,
  classicModels: () => readonly string[],
): GatewayError | undefined {
  return unusableToolRefusal(tools, carriedUnderLite, () => {
    const classic = classicModels();
    const way =
      classic.length > 0
        ? `use a model that takes hosted tools (the classic request shape: ${classic.join(', ')}; see GET /v1/models) or drop the tool`
        : 'drop the tool: no model of this gateway takes the classic request shape now';
    return `which model ${quoted(modelId, 128)} cannot take: provider_a sends it the Responses lite request shape, where the Codex backend refuses hosted tools; ${way}`;
  });
}

/**
 * How many tools a body sends, in either shape: the classic `tools` entries, or in the lite shape
 * those of its `additional_tools` item, whose `functions` namespace holds what were the classic
 * function and custom tools (`toLiteShape`), each other namespace counting as the one entry it was.
 */
export function toolsSent(body: Json): number {
  if (Array.isArray(body.tools)) return body.tools.length;
  const input = Array.isArray(body.input) ? (body.input as Json[]) : [];
  const tools = input.find((entry) => entry?.type === 'additional_tools')?.tools;
  let count = 0;
  for (const entry of Array.isArray(tools) ? (tools as Json[]) : [])
    count +=
      entry.type === 'namespace' && entry.name === 'functions' && Array.isArray(entry.tools) ? entry.tools.length : 1;
  return count;
}

/**
 * A classic body (and its headers) in the lite shape, as the CLI builds it: the tools become one
 * `additional_tools` developer item (function and custom tools in the `functions` namespace,
 * namespaces as their own entries), the instructions a developer message, both ahead of the
 * conversation; `reasoning.context: "all_turns"`; the flag in `client_metadata` over WebSocket,
 * as a header over HTTP. `tool_choice` and `parallel_tool_calls` stay where they are (the CLI
 * keeps them top level). Hosted tools (web search and the like) have no place under the flag and
 * are left out: a client's own never get here (`hostedToolRefusal` refused the turn), so these
 * are a captured faithful profile's (the CLI's own lite requests carry none either). Everything
 * else, previous_response_id chaining included, is untouched: the prefix items are the same on
 * every turn of a chat, so a continuation still extends its chain.
 */
export function toLiteShape(
  plan: { readonly headers: Record<string, string>; readonly body: Json },
  transport: ProviderATransportKind,
): { headers: Record<string, string>; body: Json } {
  const source = plan.body;
  const { instructions, tools } = source;
  const prefix: Json[] = [];
  const toolList = Array.isArray(tools) ? (tools as Json[]) : [];
  const functions = toolList.filter((tool) => NAMESPACED_TYPES.has(String(tool.type)));
  const namespaces = toolList.filter((tool) => tool.type === 'namespace');
  if (functions.length > 0 || namespaces.length > 0) {
    const entries =
      functions.length > 0
        ? [{ type: 'namespace', name: 'functions', description: '', tools: functions }, ...namespaces]
        : namespaces;
    prefix.push({ type: 'additional_tools', role: 'developer', tools: entries });
  }
  if (typeof instructions === 'string' && instructions !== '') {
    prefix.push({ type: 'message', role: 'developer', content: [{ type: 'input_text', text: instructions }] });
  }
  // A key loop instead of a rest copy and Object.entries: this runs once per attempt of every turn.
  const body: Json = {};
  for (const key in source) {
    if (key === 'instructions' || key === 'tools') continue;
    const value = source[key];
    if (key === 'input') body.input = Array.isArray(value) ? prefix.concat(value) : prefix;
    else if (key === 'reasoning') body.reasoning = { ...(value as Json), context: 'all_turns' };
    else body[key] = value;
  }
  if (body.reasoning === undefined) body.reasoning = { context: 'all_turns' };
  const headers = { ...plan.headers };
  if (transport === 'ws') body.client_metadata = { ...(source.client_metadata ?? {}), [LITE_METADATA_KEY]: 'true' };
  else headers[LITE_HEADER] = 'true';
  return { headers, body };
}
