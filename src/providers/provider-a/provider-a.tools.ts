import type { ToolDefinition } from '../../core/chat-message';
import { normalizeTools } from '../shared/tool-definitions';
import { isJsonObject } from '../../common/json';

type Json = Record<string, unknown>;
const EMPTY_PARAMETERS = { type: 'object', properties: {} };

/** Function and custom tools are ours to reshape; any other type (web_search…) is the backend's. */
const isOwnType = (type: unknown) => type === undefined || type === '' || type === 'function' || type === 'custom';

/**
 * Client tools → Responses tools (provider_a.md §7.5): nested function/custom definitions are
 * flattened (a function without parameters gets an empty object schema), flat ones pass
 * unchanged, nameless function/custom entries are dropped, and other types (web_search…) pass
 * unchanged whether or not they carry a name. Order is kept.
 */
export function responsesTools(tools: readonly ToolDefinition[]): Json[] {
  const result: Json[] = [];
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
      result.push(withoutUndefined({ type: 'custom', name: tool.name, description: tool.description, format: tool.format }));
    } else {
      result.push(
        withoutUndefined({ type: 'function', name: tool.name, description: tool.description, parameters: tool.parameters ?? EMPTY_PARAMETERS, strict: tool.strict }),
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

function withoutUndefined(value: Json): Json {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined));
}
