import { isDeepStrictEqual } from 'node:util';
import { isJsonObject, type JsonObject } from '../../common/json';
import type { ChatMessage, ChatToolCall } from '../../core/chat-message';
import { historyToolCalls } from '../../core/chat-message';
import { assistantItems, responsesParts } from './provider-a.input-items';

/**
 * What the server holds for a response chain on one open WebSocket (Responses WebSocket mode
 * keeps it in memory, `store: false` included), as far as a chat client can continue it.
 */
export interface ChainState {
  /** The request without `input` and `client_metadata`, serialized: a continuation must match it. */
  readonly shape: string;
  /** Every input item the chain holds: what was sent, then the client-side echo of the output. */
  readonly items: readonly JsonObject[];
  readonly responseId: string;
}

/**
 * The server's limit on one connection: it blames the connection, not the request, so a turn that
 * gets it on a connection kept from earlier turns is sent again on a fresh one, continuation or not.
 */
export const CONNECTION_LIMIT_CODE = 'websocket_connection_limit_reached';

/**
 * Error codes meaning "this socket cannot continue that chain": sent before any output, so the
 * turn is sent again in full on a fresh connection.
 */
const CHAIN_ERROR_CODES = new Set(['previous_response_not_found', CONNECTION_LIMIT_CODE]);

/**
 * The request fields that must not change for a continuation. Like the Codex CLI (0.171.0,
 * `responses_request_properties_match`): everything except the input and the per-turn metadata.
 */
export function requestShape(body: JsonObject): string {
  const { input: _input, client_metadata: _metadata, ...rest } = body;
  return JSON.stringify(rest);
}

/**
 * The items to send after `previous_response_id`, or `undefined` when `body` does not extend the
 * chain exactly (edited or compacted history, another model, instructions or tools): then the
 * full input is sent. An empty continuation is allowed, as the Codex CLI allows it. `shape`:
 * `requestShape(body)` when the caller already has it.
 */
export function continuationItems(
  chain: ChainState | undefined,
  body: JsonObject,
  shape?: string,
): JsonObject[] | undefined {
  const input = body.input;
  if (!chain || !Array.isArray(input) || input.length < chain.items.length) return undefined;
  if ((shape ?? requestShape(body)) !== chain.shape) return undefined;
  for (let index = 0; index < chain.items.length; index++) {
    if (!isDeepStrictEqual(chain.items[index], input[index])) return undefined;
  }
  return input.slice(chain.items.length) as JsonObject[];
}

/** `body` continuing `previousResponseId` with only `items` (key order of the Codex CLI). */
export function chainedBody(body: JsonObject, previousResponseId: string, items: JsonObject[]): JsonObject {
  const result: JsonObject = {};
  for (const [key, value] of Object.entries(body)) {
    if (key === 'input') {
      result.previous_response_id = previousResponseId;
      result.input = items;
    } else result[key] = value;
  }
  return result;
}

/**
 * The chain after a completed turn: the full input it stood for, plus its output items as the
 * chat client will echo them (one assistant message: the text, then the tool calls), translated
 * by the same code as every request. `undefined` when the echo cannot be predicted (an output
 * item a chat client cannot send back, e.g. a custom tool call): the next turn sends in full.
 * `shape`: `requestShape(fullBody)` when the caller already has it.
 */
export function chainAfterTurn(
  fullBody: JsonObject,
  responseId: string | undefined,
  outputItems: readonly JsonObject[],
  customNames: ReadonlySet<string>,
  shape?: string,
): ChainState | undefined {
  const input = fullBody.input;
  if (!responseId || !Array.isArray(input)) return undefined;
  const echo = echoMessage(outputItems);
  if (!echo) return undefined;
  // The outputs are not echoed: the client sends them with its next turn.
  const echoed = assistantItems(responsesParts(echo), historyToolCalls(echo, customNames));
  return { shape: shape ?? requestShape(fullBody), items: [...(input as JsonObject[]), ...echoed], responseId };
}

function echoMessage(outputItems: readonly JsonObject[]): ChatMessage | undefined {
  let text = '';
  const toolCalls: ChatToolCall[] = [];
  for (const item of outputItems) {
    if (item.type === 'reasoning') continue; // the server keeps it; chat clients never echo it
    if (item.type === 'message' && Array.isArray(item.content)) {
      for (const part of item.content) {
        if (!isJsonObject(part)) continue;
        if (part.type === 'output_text' && typeof part.text === 'string') text += part.text;
        else if (part.type === 'refusal' && typeof part.refusal === 'string') text += part.refusal;
      }
    } else if (item.type === 'function_call' && typeof item.call_id === 'string' && typeof item.name === 'string') {
      toolCalls.push({
        id: item.call_id,
        type: 'function',
        function: { name: item.name, arguments: typeof item.arguments === 'string' ? item.arguments : '' },
      });
    } else return undefined;
  }
  return {
    role: 'assistant',
    content: text === '' ? null : text,
    ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
  };
}

/** The code of a `previous_response_not_found`-like error event (the chain is gone, not the request wrong), else `undefined`. */
export function chainErrorCode(event: unknown): string | undefined {
  if (!isJsonObject(event) || (event.type !== 'error' && event.type !== 'response.failed')) return undefined;
  const error = isJsonObject(event.error)
    ? event.error
    : isJsonObject(event.response) && isJsonObject(event.response.error)
      ? event.response.error
      : {};
  const code = String(error.code ?? '');
  return isChainErrorCode(code) ? code : undefined;
}

/** Whether an upstream error code says the chain is gone (the request itself was not wrong). */
export function isChainErrorCode(code: string | undefined): boolean {
  return code !== undefined && CHAIN_ERROR_CODES.has(code);
}
