import type { ToolDefinition } from '../../core/chat-message';
import { toolSource } from '../../core/chat-message';
import { GatewayError } from '../../core/gateway.error';
import { isJsonObject } from '../../common/json';

/** A tool type a refusal may name: a plain identifier, else our own words. */
const SAFE_TOOL_TYPE = /^[a-z][a-z0-9_]{0,63}$/;

/**
 * 400 `invalid_request` (`param: "tools"`) for the first of the client's tools whose type the
 * turn's upstream cannot take (`takes` says which it can: a hosted tool such as `web_search` is
 * run by the vendor, not by the client), else `undefined`. Sending the turn without the tool
 * would answer as if the client had never asked for it. `why` completes the message: which model
 * or family cannot take it, and what to do; as a function, it is asked only for a refusal.
 */
export function unusableToolRefusal(
  tools: readonly ToolDefinition[],
  takes: (type: string) => boolean,
  why: string | (() => string),
): GatewayError | undefined {
  const index = tools.findIndex((raw) => isJsonObject(raw) && !takes(toolSource(raw).type));
  if (index < 0) return undefined;
  const { type } = toolSource(tools[index]);
  const what = SAFE_TOOL_TYPE.test(type) ? `the hosted tool "${type}"` : 'a hosted tool';
  const reason = typeof why === 'string' ? why : why();
  return new GatewayError('invalid_request', { param: 'tools', publicMessage: `tools.${index} is ${what}, ${reason}` });
}

/** The tool types a family takes when it runs only tools the client itself executes. */
export const clientExecutedTool = (type: string): boolean => type === 'function' || type === 'custom';
