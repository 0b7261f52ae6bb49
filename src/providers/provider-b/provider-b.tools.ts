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
  /** References replaced by `{"type":"object"}` (provider-b.schema-cleaner.ts). */
  readonly unresolvedRefs: number;
}

/**
 * Each request's tools, converted once: by the content check before the queue (where a schema that
 * expands past the inlining bound is refused), then read by every attempt's body. Nothing mutates a
 * converted declaration (renaming copies it), so attempts may share it; the entry lives as long as
 * the request's tool list.
 */
const convertedTools = new WeakMap<readonly NormalizedTool[], ConvertedTools>();

/** `convertTools` of a request's tool list, converted on its first call only. */
export function toolsOf(tools: readonly NormalizedTool[]): ConvertedTools {
  let converted = convertedTools.get(tools);
  if (converted === undefined) {
    converted = convertTools(tools);
    convertedTools.set(tools, converted);
  }
  return converted;
}

/**
 * Client tools → one `functionDeclarations` list (docs/upstream/provider-b.md §7.1), each schema as
 * `parametersJsonSchema` like the Gemini CLI's own tools. Function tools send their prepared
 * schema; custom tools their prepared parameters or the raw-text `input` fallback, and their
 * grammar in the description. Other tool types (hosted tools such as web search) have no Code
 * Assist equivalent and are skipped.
 */
function convertTools(tools: readonly NormalizedTool[]): ConvertedTools {
  const report: SchemaCleanReport = { unresolvedRefs: 0 };
  const normalized = tools.filter((tool) => tool.type === 'function' || tool.type === 'custom');
  const declarations = normalized.map((tool): FunctionDeclaration => {
    const parameters = tool.parameters
      ? cleanSchema(tool.parameters, report)
      : tool.type === 'custom'
        ? structuredClone(CUSTOM_TOOL_FALLBACK_PARAMETERS)
        : undefined;
    const description = tool.type === 'custom' ? withInputFormat(tool.description, tool.format) : tool.description;
    return {
      name: tool.name,
      ...(description !== undefined ? { description } : {}),
      ...(parameters ? { parametersJsonSchema: parameters } : {}),
    };
  });
  return { declarations, customNames: customToolNames(normalized), unresolvedRefs: report.unresolvedRefs };
}

/**
 * A custom tool's description with its input format: a declaration has no field for a grammar,
 * so the model reads the syntax and the definition there (as provider_c's protocol lists a custom
 * tool's format). `text`, the default, or a format without a string definition adds nothing.
 */
function withInputFormat(description: string | undefined, format: unknown): string | undefined {
  if (typeof format !== 'object' || format === null) return description;
  const { type, grammar } = format as { type?: unknown; grammar?: { definition?: unknown; syntax?: unknown } };
  if (type !== 'grammar' || typeof grammar?.definition !== 'string') return description;
  const syntax = typeof grammar.syntax === 'string' ? `${grammar.syntax} ` : '';
  const rule = `The input must match this ${syntax}grammar:\n${grammar.definition}`;
  return description ? `${description}\n\n${rule}` : rule;
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
