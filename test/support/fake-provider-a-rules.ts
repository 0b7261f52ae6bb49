/**
 * The request checks of the real Codex Responses backend that agent histories trip over, so the
 * fake rejects what the backend rejects (each message is the backend's wording, as reported by
 * users of the real service): unpaired call/output items, call ids longer than 64 characters,
 * tool names outside `^[a-zA-Z0-9_-]{1,64}$`, content parts of an unknown type and images that
 * are neither a URL nor a base64 data URL. Returns the error message, or undefined when the
 * body passes.
 */
const VALID_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const CALL_TYPES = new Set(['function_call', 'custom_tool_call']);
const OUTPUT_TYPES = new Set(['function_call_output', 'custom_tool_call_output']);
const NAMED_TOOL_TYPES = new Set(['function', 'custom']);
const PART_TYPES = new Set(['input_text', 'output_text', 'input_image', 'input_file', 'refusal']);
const IMAGE_URL = /^(https?:\/\/\S+|data:image\/[a-z0-9.+-]+;base64,[A-Za-z0-9+/=]+)$/i;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

export function responsesRequestViolation(body: Json): string | undefined {
  const parameter = parameterViolation(body);
  if (parameter) return parameter;
  const tools = Array.isArray(body.tools) ? body.tools : [];
  for (const [index, tool] of tools.entries()) {
    if (isObject(tool) && NAMED_TOOL_TYPES.has(String(tool.type)) && !VALID_NAME.test(String(tool.name))) {
      return `Invalid 'tools[${index}].name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`;
    }
  }
  const choice = body.tool_choice;
  if (isObject(choice) && NAMED_TOOL_TYPES.has(String(choice.type)) && !VALID_NAME.test(String(choice.name))) {
    return "Invalid 'tool_choice.name': string does not match pattern.";
  }
  const input = Array.isArray(body.input) ? body.input : [];
  const calls = new Set<string>();
  const outputs = new Set<string>();
  for (const [index, item] of input.entries()) {
    if (!isObject(item)) continue;
    const callId = String(item.call_id);
    if ((CALL_TYPES.has(String(item.type)) || OUTPUT_TYPES.has(String(item.type))) && callId.length > 64) {
      return `Invalid 'input[${index}].call_id': string too long. Expected a string with maximum length 64, but got a string with length ${callId.length} instead.`;
    }
    const parts = Array.isArray(item.content) ? item.content : Array.isArray(item.output) ? item.output : [];
    for (const [partIndex, part] of parts.entries()) {
      if (!isObject(part) || !PART_TYPES.has(String(part.type))) return `Invalid value for 'input[${index}].content[${partIndex}].type'.`;
      if (part.type === 'input_image' && !(typeof part.image_url === 'string' && IMAGE_URL.test(part.image_url))) {
        return `Invalid 'input[${index}].content[${partIndex}].image_url'. Expected a valid URL or a base64-encoded data URL.`;
      }
    }
    if (CALL_TYPES.has(String(item.type))) {
      if (!VALID_NAME.test(String(item.name))) return `Invalid 'input[${index}].name': string does not match pattern.`;
      calls.add(callId);
    } else if (OUTPUT_TYPES.has(String(item.type))) {
      if (!calls.has(callId)) return `No tool call found for function call output with call_id ${callId}.`;
      outputs.add(callId);
    }
  }
  for (const callId of calls) if (!outputs.has(callId)) return `No tool output found for function call ${callId}.`;
  return undefined;
}

/**
 * Request fields the Codex backend refuses (provider_a.md §5.1 "Never sent"): an output cap and
 * sampling fields (its reasoning models sample their own way), and a `text.format` the Responses
 * API would not take — a json_schema without a valid name or schema, or a strict schema that
 * breaks the strict rules (every object closed, every property required).
 */
function parameterViolation(body: Json): string | undefined {
  for (const field of ['max_output_tokens', 'temperature', 'top_p']) {
    if (field in body) return `Unsupported parameter: '${field}' is not supported with this model.`;
  }
  const text = body.text;
  if (!isObject(text) || text.format === undefined) return undefined;
  const format = text.format;
  if (!isObject(format) || !['text', 'json_object', 'json_schema'].includes(String(format.type))) return "Invalid value: 'text.format.type'.";
  if (format.type !== 'json_schema') return undefined;
  if (!VALID_NAME.test(String(format.name))) return "Invalid 'text.format.name': string does not match pattern.";
  if (!isObject(format.schema)) return "Missing required parameter: 'text.format.schema'.";
  return format.strict === true ? strictSchemaViolation(format.schema, String(format.name)) : undefined;
}

function strictSchemaViolation(schema: Json, name: string): string | undefined {
  const pending: unknown[] = [schema];
  while (pending.length > 0) {
    const node = pending.pop();
    if (Array.isArray(node)) pending.push(...node);
    if (!isObject(node)) continue;
    if (isObject(node.properties)) {
      if (node.additionalProperties !== false) return `Invalid schema for response_format '${name}': In context=(), 'additionalProperties' is required to be supplied and to be false.`;
      const required = Array.isArray(node.required) ? node.required : [];
      const missing = Object.keys(node.properties).find((key) => !required.includes(key));
      if (missing !== undefined) return `Invalid schema for response_format '${name}': In context=(), 'required' is required to be supplied and to be an array including every key in properties. Missing '${missing}'.`;
    }
    pending.push(...Object.values(node));
  }
  return undefined;
}
