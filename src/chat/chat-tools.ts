import { isJsonObject } from '../common/json';
import type { NormalizedTool, ToolDefinition } from '../core/chat-message';
import { toolSource } from '../core/chat-message';

const NO_TOOLS: readonly NormalizedTool[] = Object.freeze([]);

/**
 * The client's tool definitions, read once here so no family reads them again: nested
 * (`{type:"function", function:{…}}`, `{type:"custom", custom:{…}}`) and flat
 * (`{type, name, parameters}`) forms; a missing type means `function`. Nameless entries (which
 * the body rules refuse before this runs) are skipped. One request may mix the forms. The result is shared: never mutate it.
 */
export function normalizeTools(tools: readonly ToolDefinition[]): readonly NormalizedTool[] {
  if (tools.length === 0) return NO_TOOLS;
  const result: NormalizedTool[] = [];
  for (const raw of tools) {
    if (!isJsonObject(raw)) continue;
    const { type, source } = toolSource(raw);
    // Exactly as sent: the client gets the model's calls back under the name it declared.
    const name = typeof source.name === 'string' ? source.name : '';
    if (name.trim() === '') continue;
    result.push({
      name,
      type,
      description: typeof source.description === 'string' ? source.description : undefined,
      parameters: isJsonObject(source.parameters) ? source.parameters : undefined,
      format: source.format,
      strict: typeof source.strict === 'boolean' ? source.strict : undefined,
      raw,
    });
  }
  return result;
}
