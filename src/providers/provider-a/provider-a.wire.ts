import type { ProviderAWire } from '../../config/app-config';
import type { UpstreamModelInfo } from '../../models/upstream-model-info';
import type { ProviderATransportKind } from './provider-a.identifiers';

type Json = Record<string, unknown>;

/**
 * The two request shapes of the Codex backend (docs/providers.md "Two request shapes"). Codex
 * CLI 0.169.0 sends "Responses lite" to every model its list marks `use_responses_lite`
 * (test/fixtures/codex-oracle/codex-0.169.0.gpt-6.1-sol*.capture.json) and the classic shape to
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

/**
 * A classic body (and its headers) in the lite shape, as the CLI builds it: the tools become one
 * `additional_tools` developer item (client tools in the `functions` namespace), the instructions
 * a developer message, both ahead of the conversation; `reasoning.context: "all_turns"`; the
 * flag in `client_metadata` over WebSocket, as a header over HTTP. `tool_choice` and
 * `parallel_tool_calls` stay where they are (the CLI keeps them top level). Hosted tools (web
 * search and the like, only ever in a faithful profile) have no place under the flag and are left
 * out. Everything else, previous_response_id chaining included, is untouched: the prefix items are
 * the same on every turn of a chat, so a continuation still extends its chain.
 */
export function toLiteShape(
  plan: { readonly headers: Record<string, string>; readonly body: Json },
  transport: ProviderATransportKind,
): { headers: Record<string, string>; body: Json } {
  const { instructions, tools, ...rest } = plan.body;
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
  const body: Json = {};
  for (const [key, value] of Object.entries(rest)) {
    if (key === 'input') body.input = [...prefix, ...(Array.isArray(value) ? value : [])];
    else if (key === 'reasoning') body.reasoning = { ...(value as Json), context: 'all_turns' };
    else body[key] = value;
  }
  if (body.reasoning === undefined) body.reasoning = { context: 'all_turns' };
  const headers = { ...plan.headers };
  if (transport === 'ws') body.client_metadata = { ...(rest.client_metadata ?? {}), [LITE_METADATA_KEY]: 'true' };
  else headers[LITE_HEADER] = 'true';
  return { headers, body };
}
