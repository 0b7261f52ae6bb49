import { sha256Hex } from '../../common/hashing';
import { isJsonObject, type JsonObject } from '../../common/json';
import type { ToolDefinition } from '../../core/chat-message';
import { normalizeTools } from '../shared/tool-definitions';

// Client tools in the backend's terms: definitions flattened for the Responses request, and the
// names the backend accepts mapped to and from the client's own.

const EMPTY_PARAMETERS = { type: 'object', properties: {} };

/** Function and custom tools are ours to reshape; any other type (web_search…) is the backend's. */
const isOwnType = (type: unknown) => type === undefined || type === '' || type === 'function' || type === 'custom';

/**
 * Client tools → Responses tools (provider_a.md §7.5): nested function/custom definitions are
 * flattened (a function without parameters gets an empty object schema), flat ones pass
 * unchanged, nameless function/custom entries are dropped, and other types (web_search…) pass
 * unchanged whether or not they carry a name. Order is kept.
 */
export function responsesTools(tools: readonly ToolDefinition[]): JsonObject[] {
  const result: JsonObject[] = [];
  for (const raw of tools) {
    if (!isJsonObject(raw)) continue;
    if (!isOwnType(raw.type)) {
      result.push({ ...raw });
      continue;
    }
    const [tool] = normalizeTools([raw]);
    if (!tool) continue;
    if (!isJsonObject(raw[tool.type])) {
      result.push({ ...raw });
    } else if (tool.type === 'custom') {
      result.push(
        withoutUndefined({ type: 'custom', name: tool.name, description: tool.description, format: tool.format }),
      );
    } else {
      result.push(
        withoutUndefined({
          type: 'function',
          name: tool.name,
          description: tool.description,
          parameters: tool.parameters ?? EMPTY_PARAMETERS,
          strict: tool.strict,
        }),
      );
    }
  }
  return result;
}

/**
 * `tool_choice` as the Responses API spells it: strings unchanged, nested
 * `{type, function|custom: {name}}` flattened to `{type, name}`, flat objects unchanged.
 */
export function responsesToolChoice(choice: unknown): unknown {
  if (!isJsonObject(choice)) return choice;
  const type = typeof choice.type === 'string' ? choice.type : undefined;
  const nested = type !== undefined ? choice[type] : undefined;
  if ((type === 'function' || type === 'custom') && isJsonObject(nested) && typeof nested.name === 'string') {
    return { type, name: nested.name };
  }
  return choice;
}

function withoutUndefined(value: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined));
}

/** The backend's rule for function and custom tool names (the OpenAI function-name rule). */
export const VALID_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX_NAME_LENGTH = 64;
const MCP_PREFIX = 'mcp__';
/** `_` + 8 hex characters of the original name's SHA-256: what makes a shortened name unique. */
const SUFFIX_LENGTH = 9;

/** Client tool name ↔ the name sent upstream, for one request. */
export interface ToolNameMap {
  /** The upstream name of a client name (unchanged when it is already valid). */
  toUpstream(clientName: string): string;
  /** The client's name of an upstream name (unchanged when it was never renamed). */
  toClient(upstreamName: string): string;
  /** How many client names had to be renamed. */
  readonly renamed: number;
}

/**
 * The readable part of a replacement name: characters outside `[a-zA-Z0-9_-]` become `_`, and a
 * long name keeps its `mcp__` prefix and its tail (the tool's own name, which MCP clients put
 * last: `mcp__<server>__<tool>`), else its head.
 */
function readablePart(name: string): string {
  const sanitized = name.replace(/[^a-zA-Z0-9_-]/g, '_');
  const room = MAX_NAME_LENGTH - SUFFIX_LENGTH;
  if (sanitized.length <= room) return sanitized === '' ? 'tool' : sanitized;
  if (sanitized.startsWith(MCP_PREFIX)) return MCP_PREFIX + sanitized.slice(-(room - MCP_PREFIX.length));
  return sanitized.slice(0, room);
}

/**
 * Builds the renaming for one request's tool names. Valid names are kept as they are; an invalid
 * one becomes `<readable part>_<8 hex of its SHA-256>`, which depends only on the name itself
 * (so the same tool gets the same upstream name on every turn of a chat, and the prompt cache
 * still matches). A clash with another name of the request (practically impossible) is resolved
 * by hashing again with a counter, visiting names in sorted order so the result stays
 * deterministic. Hand-written: no library implements this naming rule.
 */
export function buildToolNameMap(clientNames: Iterable<string>): ToolNameMap {
  const names = [...new Set(clientNames)].sort();
  const upstreamOf = new Map<string, string>();
  const clientOf = new Map<string, string>();
  const taken = new Set(names.filter((name) => VALID_TOOL_NAME.test(name)));
  let renamed = 0;
  for (const name of names) {
    if (VALID_TOOL_NAME.test(name)) continue;
    const readable = readablePart(name);
    let candidate = '';
    for (let attempt = 0; candidate === '' || taken.has(candidate); attempt++) {
      candidate = `${readable}_${sha256Hex(attempt === 0 ? name : `${name}#${attempt}`).slice(0, SUFFIX_LENGTH - 1)}`;
    }
    taken.add(candidate);
    upstreamOf.set(name, candidate);
    clientOf.set(candidate, name);
    renamed++;
  }
  return {
    toUpstream: (name) => upstreamOf.get(name) ?? name,
    toClient: (name) => clientOf.get(name) ?? name,
    renamed,
  };
}

const NAMED_ITEM_TYPES = new Set(['function_call', 'custom_tool_call']);
const NAMED_TOOL_TYPES = new Set(['function', 'custom']);

/** Every function/custom tool name of a Responses body: tools, tool_choice and history calls. */
function toolNamesOf(body: JsonObject): string[] {
  const names: string[] = [];
  const visit = (entry: unknown, types: ReadonlySet<string>) => {
    if (isJsonObject(entry) && types.has(String(entry.type)) && typeof entry.name === 'string') names.push(entry.name);
  };
  if (Array.isArray(body.tools)) body.tools.forEach((tool) => visit(tool, NAMED_TOOL_TYPES));
  visit(body.tool_choice, NAMED_TOOL_TYPES);
  if (Array.isArray(body.input)) body.input.forEach((item) => visit(item, NAMED_ITEM_TYPES));
  return names;
}

/**
 * Renames every function/custom tool name in a built Responses body (tools, tool_choice, history
 * calls) to one the backend accepts; returns the new body and the map that turns the names of
 * calls coming back into the client's names.
 */
export function withUpstreamToolNames(body: JsonObject): { body: JsonObject; names: ToolNameMap } {
  const names = buildToolNameMap(toolNamesOf(body));
  if (names.renamed === 0) return { body, names };
  const rename = (entry: unknown, types: ReadonlySet<string>) =>
    isJsonObject(entry) && types.has(String(entry.type)) && typeof entry.name === 'string'
      ? { ...entry, name: names.toUpstream(entry.name) }
      : entry;
  const renamedBody: JsonObject = { ...body };
  if (Array.isArray(body.tools)) renamedBody.tools = body.tools.map((tool) => rename(tool, NAMED_TOOL_TYPES));
  if (body.tool_choice !== undefined) renamedBody.tool_choice = rename(body.tool_choice, NAMED_TOOL_TYPES);
  if (Array.isArray(body.input)) renamedBody.input = body.input.map((item) => rename(item, NAMED_ITEM_TYPES));
  return { body: renamedBody, names };
}
