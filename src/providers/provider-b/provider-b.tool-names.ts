import type { ToolNameMap, ToolNameRule } from '../shared/tool-names';
import { buildToolNameMap } from '../shared/tool-names';
import type { CodeAssistContent, CodeAssistPart, GenerateContentRequest } from './provider-b.wire-types';

/**
 * Gemini's function-name rule: a letter or `_` first, then letters, digits, `_`, `.`, `:` or `-`,
 * at most 64 characters. Code Assist refuses the whole request when one declared name breaks it
 * (400 `[FIELD_INVALID] Invalid function name`); the Gemini CLI renames its MCP tools to follow it.
 */
export const GEMINI_TOOL_NAMES: ToolNameRule = {
  valid: /^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/,
  badCharacter: /[^a-zA-Z0-9_.:-]/g,
  badStart: /^[^a-zA-Z_]/,
  maxLength: 64,
};

/** Every function name of a built request: declarations, `allowedFunctionNames`, history calls and results. */
function toolNamesOf(body: GenerateContentRequest): string[] {
  const names: string[] = [];
  for (const tool of body.tools ?? [])
    for (const declaration of tool.functionDeclarations) names.push(declaration.name);
  names.push(...(body.toolConfig?.functionCallingConfig.allowedFunctionNames ?? []));
  for (const content of body.contents) {
    for (const part of content.parts) {
      if (part.functionCall) names.push(part.functionCall.name);
      if (part.functionResponse) names.push(part.functionResponse.name);
    }
  }
  return names;
}

/**
 * Renames every function name of a built request to one Gemini accepts (`GEMINI_TOOL_NAMES`);
 * returns the new body and the map that turns the names of calls coming back into the client's.
 * A request whose names all are valid is returned as it is.
 */
export function withUpstreamToolNames(body: GenerateContentRequest): {
  body: GenerateContentRequest;
  names: ToolNameMap;
} {
  const names = buildToolNameMap(toolNamesOf(body), GEMINI_TOOL_NAMES);
  if (names.renamed === 0) return { body, names };
  const up = (name: string) => names.toUpstream(name);
  const renamePart = (part: CodeAssistPart): CodeAssistPart => {
    if (part.functionCall) return { ...part, functionCall: { ...part.functionCall, name: up(part.functionCall.name) } };
    if (part.functionResponse)
      return { ...part, functionResponse: { ...part.functionResponse, name: up(part.functionResponse.name) } };
    return part;
  };
  const contents = body.contents.map((content): CodeAssistContent => ({
    ...content,
    parts: content.parts.map(renamePart),
  }));
  const declarations = body.tools?.[0].functionDeclarations;
  const tools: GenerateContentRequest['tools'] = declarations && [
    { functionDeclarations: declarations.map((declaration) => ({ ...declaration, name: up(declaration.name) })) },
  ];
  const config = body.toolConfig?.functionCallingConfig;
  const toolConfig =
    config?.allowedFunctionNames !== undefined
      ? { functionCallingConfig: { ...config, allowedFunctionNames: config.allowedFunctionNames.map(up) } }
      : body.toolConfig;
  return {
    body: {
      ...body,
      contents,
      ...(tools !== undefined ? { tools } : {}),
      ...(toolConfig !== undefined ? { toolConfig } : {}),
    },
    names,
  };
}
