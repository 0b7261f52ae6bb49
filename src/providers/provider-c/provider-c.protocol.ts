import type { NormalizedTool } from '../../core/chat-message';
import { forcedToolName } from '../../core/chat-message';

/** The tool protocol block (docs/upstream/provider-c.md §5.2), our wording of the rules in §5.1. */
const PROTOCOL_TEMPLATE = `## Tools

You are helping a user through a client program. The client can run the tools listed below; you
cannot run commands, read files or use the network yourself.

To use a tool, write a block exactly like this:

\`\`\`agent_tool_call
{"name": "TOOL_NAME", "arguments": {"example": "value"}}
\`\`\`

- The first line is three backticks followed directly by agent_tool_call; the last line is three
  backticks. Put one JSON object inside and nothing else.
- "name" must be one of the tools below. "arguments" must be a JSON object that fits the tool's
  parameters. For a tool whose type is "custom", "arguments" is a JSON string with the raw input.
- Write one block per tool call. After your blocks, stop and wait: the results come back in the
  next message as "Tool result".
- Do not make up tool results, and do not claim to know file contents or command output you have
  not received.
- If the request does not need a tool, just answer.{{EXTRA_RULE}}

Available tools (JSON):
{{TOOLS_JSON}}`;

/** docs/upstream/provider-c.md §5.3: the line after the transcript when tools exist. */
export const CLOSING_REMINDER =
  '(Continue the conversation above. To use a tool, reply with agent_tool_call blocks as described at the top.)';

/** How the client's `tool_choice` shapes this turn (docs/upstream/provider-c.md §5.4). */
export interface ToolChoicePlan {
  /** The protocol block and reminder are in the prompt and a block becomes a tool call; off for `none`, whose blocks are dropped. */
  readonly callsAllowed: boolean;
  /** The one extra rule line, for `required` or a forced tool. */
  readonly extraRule?: string;
}

/**
 * docs/upstream/provider-c.md §5.4: absent/`auto` → protocol; no tools or `none` → no protocol, no reminder,
 * and a block the model writes anyway is cut out and dropped (never text, never a call);
 * `required` → must-call rule; a forced function or custom tool X → must-call-X rule. The rule
 * is only words to the model: the chat layer holds the answer to it (`enforced` in
 * provider-c.parameters.ts). The gateway never adds a rule on its own, nor for
 * `parallel_tool_calls` (`false` is enforced on the answer).
 */
export function planToolChoice(toolChoice: unknown, tools: readonly NormalizedTool[]): ToolChoicePlan {
  if (tools.length === 0 || toolChoice === 'none') return { callsAllowed: false };
  if (toolChoice === 'required')
    return {
      callsAllowed: true,
      extraRule: 'This reply must contain at least one agent_tool_call block.',
    };
  const forced = forcedToolName(toolChoice);
  // Quoted as the tools JSON lists the name, so a space or quote in it reads as the name's.
  if (forced !== undefined)
    return { callsAllowed: true, extraRule: `This reply must call the tool ${JSON.stringify(forced)}.` };
  return { callsAllowed: true };
}

/**
 * docs/upstream/provider-c.md §5.2 `{{TOOLS_JSON}}`: a compact array, keys in the order name, type (`function` | `custom`),
 * description (when given), then parameters (function tools: the client's schema unmodified) or
 * format (custom tools, when given).
 */
export function renderToolsJson(tools: readonly NormalizedTool[]): string {
  return JSON.stringify(
    tools.map((tool) => {
      const custom = tool.type === 'custom';
      const entry: Record<string, unknown> = { name: tool.name, type: custom ? 'custom' : 'function' };
      if (tool.description !== undefined) entry.description = tool.description;
      if (!custom && tool.parameters !== undefined) entry.parameters = tool.parameters;
      if (custom && tool.format !== undefined) entry.format = tool.format;
      return entry;
    }),
  );
}

/** The protocol block placed before the transcript. */
export function renderProtocol(tools: readonly NormalizedTool[], plan: ToolChoicePlan): string {
  return PROTOCOL_TEMPLATE.replace('{{EXTRA_RULE}}', () => (plan.extraRule ? `\n- ${plan.extraRule}` : '')).replace(
    '{{TOOLS_JSON}}',
    () => renderToolsJson(tools),
  );
}
