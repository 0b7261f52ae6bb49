import type { NormalizedTool } from '../../core/chat-message';
import { customToolNames, forcedToolName } from '../../core/chat-message';
import { CUSTOM_TOOL_FALLBACK_PARAMETERS } from './provider-b.constants';
import type { SchemaCleanReport } from './provider-b.schema-cleaner';
import { cleanSchema } from './provider-b.schema-cleaner';
import type { FunctionCallingConfig, FunctionDeclaration } from './provider-b.wire-types';

export interface ConvertedTools {
  readonly declarations: FunctionDeclaration[];
  /** Names declared as custom tools (history replay and returned calls use it). */
  readonly customNames: ReadonlySet<string>;
}

/**
 * Client tools → one `functionDeclarations` list (docs/upstream/provider-b.md §7.1), each schema as
 * `parametersJsonSchema` like the Gemini CLI's own tools. Function tools send their prepared
 * schema; custom tools their prepared parameters or the raw-text `input` fallback. Other
 * tool types (hosted tools such as web search) have no Code Assist equivalent and are skipped.
 */
export function convertTools(tools: readonly NormalizedTool[], report: SchemaCleanReport): ConvertedTools {
  const normalized = tools.filter((tool) => tool.type === 'function' || tool.type === 'custom');
  const declarations = normalized.map((tool): FunctionDeclaration => {
    const parameters = tool.parameters
      ? cleanSchema(tool.parameters, report)
      : tool.type === 'custom'
        ? structuredClone(CUSTOM_TOOL_FALLBACK_PARAMETERS)
        : undefined;
    return {
      name: tool.name,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      ...(parameters ? { parametersJsonSchema: parameters } : {}),
    };
  });
  return { declarations, customNames: customToolNames(normalized) };
}

/**
 * `tool_choice` → `functionCallingConfig` (docs/upstream/provider-b.md §7.3). Absent or unrecognised → none:
 * the gateway never forces tool use on its own.
 */
export function convertToolChoice(toolChoice: unknown): FunctionCallingConfig | undefined {
  if (toolChoice === 'auto') return { mode: 'AUTO' };
  if (toolChoice === 'none') return { mode: 'NONE' };
  if (toolChoice === 'required') return { mode: 'ANY' };
  const forced = forcedToolName(toolChoice);
  return forced ? { mode: 'ANY', allowedFunctionNames: [forced] } : undefined;
}
