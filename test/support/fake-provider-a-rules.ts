/**
 * The request checks of the real Codex Responses backend that agent histories trip over, so the
 * fake rejects what the backend rejects (each message is the backend's wording, as reported by
 * users of the real service): unpaired call/output items (a custom tool's call is answered only by a
 * custom tool output, a function's only by a function output), call ids longer than 64 characters,
 * a tool without a type, tool names outside `^[a-zA-Z0-9_-]{1,64}$`, content parts of an unknown type and images that
 * are neither a URL nor a base64 data URL. Returns the error message, or undefined when the
 * body passes.
 */
const VALID_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const CALL_TYPES = new Set(['function_call', 'custom_tool_call']);
const OUTPUT_TYPES = new Set(['function_call_output', 'custom_tool_call_output']);
/** The words the backend's pairing errors use for each kind of call. */
const CALL_WORDS: Record<string, string> = { function_call: 'function call', custom_tool_call: 'custom tool call' };
const NAMED_TOOL_TYPES = new Set(['function', 'custom']);
const PART_TYPES = new Set(['input_text', 'output_text', 'input_image', 'input_file', 'refusal']);
const IMAGE_URL = /^(https?:\/\/\S+|data:image\/[a-z0-9.+-]+;base64,[A-Za-z0-9+/=]+)$/i;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function responsesRequestViolation(body: Json): string | undefined {
  const parameter = parameterViolation(body);
  if (parameter) return parameter;
  const tools = Array.isArray(body.tools) ? body.tools : [];
  for (const [index, tool] of tools.entries()) {
    if (isObject(tool) && typeof tool.type !== 'string') return `Missing required parameter: 'tools[${index}].type'.`;
    if (isObject(tool) && NAMED_TOOL_TYPES.has(String(tool.type)) && !VALID_NAME.test(String(tool.name))) {
      return `Invalid 'tools[${index}].name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`;
    }
  }
  const choice = body.tool_choice;
  if (isObject(choice) && NAMED_TOOL_TYPES.has(String(choice.type)) && !VALID_NAME.test(String(choice.name))) {
    return "Invalid 'tool_choice.name': string does not match pattern.";
  }
  const input = Array.isArray(body.input) ? body.input : [];
  /** Each call's kind by its id, and the ids answered by an output of that kind. */
  const calls = new Map<string, string>();
  const outputs = new Set<string>();
  for (const [index, item] of input.entries()) {
    if (!isObject(item)) continue;
    const callId = String(item.call_id);
    if ((CALL_TYPES.has(String(item.type)) || OUTPUT_TYPES.has(String(item.type))) && callId.length > 64) {
      return `Invalid 'input[${index}].call_id': string too long. Expected a string with maximum length 64, but got a string with length ${callId.length} instead.`;
    }
    const parts = Array.isArray(item.content) ? item.content : Array.isArray(item.output) ? item.output : [];
    for (const [partIndex, part] of parts.entries()) {
      if (!isObject(part) || !PART_TYPES.has(String(part.type)))
        return `Invalid value for 'input[${index}].content[${partIndex}].type'.`;
      if (part.type === 'input_image' && !(typeof part.image_url === 'string' && IMAGE_URL.test(part.image_url))) {
        return `Invalid 'input[${index}].content[${partIndex}].image_url'. Expected a valid URL or a base64-encoded data URL.`;
      }
    }
    if (CALL_TYPES.has(String(item.type))) {
      if (!VALID_NAME.test(String(item.name))) return `Invalid 'input[${index}].name': string does not match pattern.`;
      calls.set(callId, String(item.type));
    } else if (OUTPUT_TYPES.has(String(item.type))) {
      const kind = String(item.type).replace(/_output$/, '');
      if (calls.get(callId) !== kind) {
        return `No tool call found for ${CALL_WORDS[kind]} output with call_id ${callId}.`;
      }
      outputs.add(callId);
    }
  }
  for (const [callId, kind] of calls) {
    if (!outputs.has(callId)) return `No tool output found for ${CALL_WORDS[kind]} ${callId}.`;
  }
  return undefined;
}

/** One model of the fake's list, in the backend's `/models` entry shape (the fields the gateway reads). */
export interface FakeModel {
  slug: string;
  visibility?: 'list' | 'hide';
  supported_reasoning_levels: Array<{ effort: string; description?: string }>;
  default_reasoning_level?: string;
  service_tiers?: Array<{ id: string; name?: string }>;
  use_responses_lite?: boolean;
  context_window?: number;
  input_modalities?: string[];
  default_verbosity?: string;
  priority?: number;
  support_verbosity?: boolean;
  default_reasoning_summary?: string;
  supports_reasoning_summary_parameter?: boolean;
  /** The backend lists and serves the model only to a client at least this new. */
  minimal_client_version?: string;
}

/** The Codex CLI version a request claims: its User-Agent `codex_exec/<version> (…`. */
export function clientVersionOf(userAgent: string | undefined): string | undefined {
  return /^[\w-]+\/(\d+\.\d+\.\d+)/.exec(userAgent ?? '')?.[1];
}

/** `version` is older than `minimum` (x.y.z, numerically); an unknown version counts as older. */
export function olderThan(version: string | undefined, minimum: string): boolean {
  if (version === undefined) return true;
  const [a, b] = [version, minimum].map((text) => text.split(/[.-]/).slice(0, 3).map(Number));
  for (let index = 0; index < 3; index++) if (a[index] !== b[index]) return a[index] < b[index];
  return false;
}

/** The efforts the backend takes on the wire; `ultra` is a CLI-only mode it refuses. */
const WIRE_EFFORTS = new Set(['low', 'medium', 'high', 'xhigh', 'max']);
const LITE_FLAG = 'ws_request_header_x_openai_internal_codex_responses_lite';

/** A refusal with its HTTP status and the backend's body. */
export interface FakeRefusal {
  status: number;
  body: Record<string, unknown>;
}

const badRequest = (message: string, param: string): FakeRefusal => ({
  status: 400,
  body: { error: { message, type: 'invalid_request_error', param, code: null } },
});

/**
 * What the real backend refuses about the model and the request shape: a model it does not
 * serve (404 "Model not found"), a model it serves only to a newer client than the User-Agent
 * claims (400 "requires a newer version of Codex"), an effort the model does not take on the wire, and a
 * mixed shape — the lite flag on a model not marked `use_responses_lite`, the flag without
 * `reasoning.context: "all_turns"`, top-level `tools`/`instructions` or hosted tools under the
 * flag. `liteHeader`: the HTTP request carried `x-openai-internal-codex-responses-lite: true`.
 */
export function modelRefusal(
  body: Json,
  models: readonly FakeModel[],
  liteHeader: boolean,
  clientVersion?: string,
): FakeRefusal | undefined {
  const model = models.find((entry) => entry.slug === body.model);
  if (!model) return { status: 404, body: { detail: 'Model not found' } };
  // The backend reads the client version from the User-Agent when no `version` header is sent.
  if (model.minimal_client_version !== undefined && olderThan(clientVersion, model.minimal_client_version))
    return badRequest(
      `The '${model.slug}' model requires a newer version of Codex. Please upgrade to the latest app or CLI and try again.`,
      'model',
    );
  const reasoning = isObject(body.reasoning) ? body.reasoning : {};
  // A model listed without effort levels is not held to any (the CLI still sends its setting).
  if (reasoning.effort !== undefined && model.supported_reasoning_levels.length > 0) {
    const allowed = model.supported_reasoning_levels
      .map((level) => level.effort)
      .filter((effort) => WIRE_EFFORTS.has(effort));
    if (!allowed.includes(String(reasoning.effort))) {
      return badRequest(
        `Unsupported value: '${String(reasoning.effort)}' is not supported with the '${model.slug}' model. Supported values are: ${allowed.map((effort) => `'${effort}'`).join(', ')}.`,
        'reasoning.effort',
      );
    }
  }
  const metadata = isObject(body.client_metadata) ? body.client_metadata : {};
  const lite = liteHeader || metadata[LITE_FLAG] === 'true';
  if (!lite) return undefined;
  if (model.use_responses_lite !== true)
    return badRequest(`The responses lite request shape is not supported for model '${model.slug}'.`, 'model');
  if (reasoning.context !== 'all_turns')
    return badRequest("Responses lite requires 'reasoning.context' to be 'all_turns'.", 'reasoning.context');
  if (body.tools !== undefined)
    return badRequest(
      "'tools' is not supported with responses lite; send them as an additional_tools input item.",
      'tools',
    );
  if (body.instructions !== undefined)
    return badRequest(
      "'instructions' is not supported with responses lite; send them as a developer message.",
      'instructions',
    );
  const input = Array.isArray(body.input) ? body.input : [];
  for (const item of input) {
    if (!isObject(item) || item.type !== 'additional_tools') continue;
    for (const tool of Array.isArray(item.tools) ? item.tools : []) {
      if (!isObject(tool) || tool.type !== 'namespace')
        return badRequest('Hosted tools are not supported with responses lite.', 'input');
    }
  }
  return undefined;
}

/**
 * Request fields the Codex backend refuses (docs/upstream/provider-a.md §5.1 "Never sent"): an output cap and
 * sampling fields (its reasoning models sample their own way), and a `text.format` the Responses
 * API would not take — a json_schema without a valid name or schema. A strict schema it cannot
 * honour is `strictSchemaRefusal`'s.
 */
function parameterViolation(body: Json): string | undefined {
  for (const field of ['max_output_tokens', 'temperature', 'top_p']) {
    if (field in body) return `Unsupported parameter: '${field}' is not supported with this model.`;
  }
  const text = body.text;
  if (!isObject(text) || text.format === undefined) return undefined;
  const format = text.format;
  if (!isObject(format) || !['text', 'json_object', 'json_schema'].includes(String(format.type)))
    return "Invalid value: 'text.format.type'.";
  if (format.type !== 'json_schema') return undefined;
  if (!VALID_NAME.test(String(format.name))) return "Invalid 'text.format.name': string does not match pattern.";
  if (!isObject(format.schema)) return "Missing required parameter: 'text.format.schema'.";
  return undefined;
}

/**
 * A strict `text.format` schema the backend cannot honour, refused as the backend does: 400
 * `invalid_request_error` with code `invalid_json_schema` and param `text.format.schema`, the
 * message naming the format and the place (`In context=('properties', 'x'), …`). Checked: every
 * object closed and every property required, and every enum value of the node's own type.
 */
export function strictSchemaRefusal(body: Json): FakeRefusal | undefined {
  const text = isObject(body.text) ? body.text : {};
  const format = isObject(text.format) ? text.format : {};
  if (format.type !== 'json_schema' || format.strict !== true || !isObject(format.schema)) return undefined;
  const problem = strictSchemaProblem(format.schema, []);
  if (problem === undefined) return undefined;
  return {
    status: 400,
    body: {
      error: {
        message: `Invalid schema for response_format '${String(format.name)}': In context=(${problem.context.map((part) => `'${part}'`).join(', ')}), ${problem.reason}`,
        type: 'invalid_request_error',
        param: 'text.format.schema',
        code: 'invalid_json_schema',
      },
    },
  };
}

const JSON_TYPES: Record<string, (value: unknown) => boolean> = {
  string: (value) => typeof value === 'string',
  number: (value) => typeof value === 'number',
  integer: (value) => Number.isInteger(value),
  boolean: (value) => typeof value === 'boolean',
  null: (value) => value === null,
  object: isObject,
  array: Array.isArray,
};

function strictSchemaProblem(node: Json, context: string[]): { context: string[]; reason: string } | undefined {
  if (isObject(node.properties)) {
    if (node.additionalProperties !== false)
      return { context, reason: "'additionalProperties' is required to be supplied and to be false." };
    const required = Array.isArray(node.required) ? node.required : [];
    const missing = Object.keys(node.properties).find((key) => !required.includes(key));
    if (missing !== undefined)
      return {
        context,
        reason: `'required' is required to be supplied and to be an array including every key in properties. Missing '${missing}'.`,
      };
  }
  const matches = typeof node.type === 'string' ? JSON_TYPES[node.type] : undefined;
  if (matches && Array.isArray(node.enum)) {
    const stray = node.enum.find((value) => !matches(value));
    if (stray !== undefined)
      return {
        context,
        reason: `enum value ${String(stray)} does not validate against {'type': '${String(node.type)}'}.`,
      };
  }
  // Every nested object is looked at (`properties` maps and `anyOf` lists too), as the context shows it.
  for (const [key, value] of Object.entries(node)) {
    const children = Array.isArray(value)
      ? value.map((item, index) => [[key, String(index)], item] as const)
      : [[[key], value] as const];
    for (const [steps, child] of children) {
      const found = isObject(child) ? strictSchemaProblem(child, [...context, ...steps]) : undefined;
      if (found) return found;
    }
  }
  return undefined;
}
