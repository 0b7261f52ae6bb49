/**
 * What the real Code Assist backend refuses with 400 INVALID_ARGUMENT before generating, so
 * the fake refuses it too and tests fail when the gateway would send it:
 *
 * - a `parameters` schema (the OpenAPI-subset `Schema` message) with a field that message does
 *   not have (`const`, `oneOf`, `allOf`, `not`, `examples`, `additionalProperties`,
 *   `patternProperties`, `if`…), or a `type` that is not one string. The real answer reads
 *   `Invalid JSON payload received. Unknown name "const" at 'request.tools[0].function_declarations[0].parameters.properties[1].value': Cannot find field.`
 *   (zed-industries/zed#44875, danny-avila/LibreChat#11761);
 * - a declaration with both `parameters` and `parametersJsonSchema` (they are mutually exclusive);
 * - a `parametersJsonSchema` (full JSON Schema, what the gateway sends) holding a `$ref` that points
 *   at nothing in that schema, such as a `#/$defs/…` whose `$defs` is gone. The real answer reads
 *   `reference to undefined schema at properties.target_object.anyOf.1`
 *   (google-gemini/gemini-cli#13326). A reference that resolves is accepted, as the real backend
 *   resolves it (googleapis/python-genai#1122);
 * - a function-call turn whose next content does not answer every call with exactly one
 *   `functionResponse` ("Please ensure that the number of function response parts is equal to
 *   the number of function call parts of the function call turn.");
 * - a function name that breaks Gemini's rule (a letter or `_` first, then `[A-Za-z0-9_.:-]`, at
 *   most 64 characters). The real answer reads
 *   `The GenerateContentRequest proto is invalid:\n  * tools[0].function_declarations[15].name: [FIELD_INVALID] Invalid function name. …`
 *   (router-for-me/CLIProxyAPI#218, google-gemini/gemini-cli#12425). The fake holds the names in
 *   `allowedFunctionNames` and in the history's calls and results to the same rule, so a name
 *   that escapes the gateway's renaming anywhere in the body fails the tests;
 * - two declarations of one name. The real answer reads `Duplicate function declaration found: click`
 *   (google-gemini/gemini-cli#22207, googleapis/dotnet-genai#189);
 * - a part whose `text` is empty, in `contents` or in `systemInstruction`. The real answer reads
 *   `Unable to submit request because it has an empty text parameter. Add a value to the parameter and try again.`
 *   (zuisong/gemini-openai-proxy#83, google-gemini/deprecated-generative-ai-python#697);
 * - a content without parts. The real answer reads
 *   `* GenerateContentRequest.contents[41].parts: contents.parts must not be empty.`
 *   (langchain-ai/langchain-google#691, vercel/ai#3775).
 */
const SCHEMA_FIELDS = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'maxItems',
  'minItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'example',
  'anyOf',
  'propertyOrdering',
  'default',
  'items',
  'minimum',
  'maximum',
]);

/** The `GenerationConfig` fields of the Code Assist request (as Gemini CLI 0.61.0's converter lists them). */
const GENERATION_CONFIG_FIELDS = new Set([
  'temperature',
  'topP',
  'topK',
  'candidateCount',
  'maxOutputTokens',
  'stopSequences',
  'responseLogprobs',
  'logprobs',
  'presencePenalty',
  'frequencyPenalty',
  'seed',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  'routingConfig',
  'modelSelectionConfig',
  'responseModalities',
  'mediaResolution',
  'speechConfig',
  'audioTimestamp',
  'thinkingConfig',
]);

/** An unknown generationConfig field, or a JSON schema without the JSON MIME type (or beside the OpenAPI one). */
function generationConfigProblem(config: any): string | undefined {
  if (config === undefined) return undefined;
  for (const key of Object.keys(config)) {
    if (!GENERATION_CONFIG_FIELDS.has(key))
      return `Invalid JSON payload received. Unknown name "${key}" at 'request.generation_config': Cannot find field.`;
  }
  if (config.responseJsonSchema !== undefined && config.responseSchema !== undefined)
    return 'responseSchema and responseJsonSchema are mutually exclusive.';
  if (
    (config.responseJsonSchema !== undefined || config.responseSchema !== undefined) &&
    config.responseMimeType !== 'application/json'
  ) {
    return 'When response_schema is set, response_mime_type must be application/json.';
  }
  return undefined;
}

/** Gemini's function-name rule, as the backend states it in its refusal. */
const FUNCTION_NAME = /^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/;
const FUNCTION_NAME_RULE =
  'Invalid function name. Must start with a letter or an underscore. Must be a-z, A-Z, 0-9, or contain underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.';

/** The backend's refusal of the first function name that breaks the rule, wherever a name appears. */
function functionNameProblem(request: any): string | undefined {
  const places: [string, unknown][] = [];
  for (const [index, declaration] of (request?.tools?.[0]?.functionDeclarations ?? []).entries())
    places.push([`tools[0].function_declarations[${index}].name`, declaration?.name]);
  for (const [index, name] of (request?.toolConfig?.functionCallingConfig?.allowedFunctionNames ?? []).entries())
    places.push([`tool_config.function_calling_config.allowed_function_names[${index}]`, name]);
  for (const [contentIndex, content] of (request?.contents ?? []).entries()) {
    for (const [partIndex, part] of (content?.parts ?? []).entries()) {
      const at = `contents[${contentIndex}].parts[${partIndex}]`;
      if (part?.functionCall) places.push([`${at}.function_call.name`, part.functionCall.name]);
      if (part?.functionResponse) places.push([`${at}.function_response.name`, part.functionResponse.name]);
    }
  }
  const bad = places.find(([, name]) => typeof name !== 'string' || !FUNCTION_NAME.test(name));
  return bad && `The GenerateContentRequest proto is invalid:\n  * ${bad[0]}: [FIELD_INVALID] ${FUNCTION_NAME_RULE}`;
}

const EMPTY_TEXT =
  'Unable to submit request because it has an empty text parameter. Add a value to the parameter and try again.';

/** True when a content or the system instruction holds a part whose `text` is the empty string. */
function hasEmptyText(request: any): boolean {
  const contents: any[] = [...(request?.contents ?? []), request?.systemInstruction];
  return contents.some((content) => (content?.parts ?? []).some((part: any) => part?.text === ''));
}

/** The backend's refusal of the first content with no parts. */
function emptyPartsProblem(request: any): string | undefined {
  const index = (request?.contents ?? []).findIndex(
    (content: any) => !Array.isArray(content?.parts) || content.parts.length === 0,
  );
  return index === -1
    ? undefined
    : `* GenerateContentRequest.contents[${index}].parts: contents.parts must not be empty.`;
}

/** The backend's error message for the first problem found, or undefined when the body is acceptable. */
export function rejectionOf(body: any): string | undefined {
  const request = body?.request;
  const configProblem = generationConfigProblem(request?.generationConfig);
  if (configProblem) return configProblem;
  if (hasEmptyText(request)) return EMPTY_TEXT;
  const partsProblem = emptyPartsProblem(request);
  if (partsProblem) return partsProblem;
  const nameProblem = functionNameProblem(request);
  if (nameProblem) return nameProblem;
  const declarations: any[] = (request?.tools ?? []).flatMap((tool: any) => tool?.functionDeclarations ?? []);
  const declared = new Set<unknown>();
  for (const declaration of declarations) {
    const name = declaration?.name;
    if (declared.has(name)) return `Duplicate function declaration found: ${name}`;
    declared.add(name);
  }
  for (const [index, declaration] of declarations.entries()) {
    const at = `request.tools[0].function_declarations[${index}]`;
    if (declaration.parameters !== undefined && declaration.parametersJsonSchema !== undefined) {
      return `Invalid value at '${at}': parameters and parameters_json_schema are mutually exclusive.`;
    }
    if (declaration.parameters !== undefined) {
      const problem = schemaProblem(declaration.parameters, `${at}.parameters`);
      if (problem) return problem;
    }
    if (declaration.parametersJsonSchema !== undefined) {
      const dangling = danglingReference(declaration.parametersJsonSchema, declaration.parametersJsonSchema, []);
      if (dangling !== undefined) return `reference to undefined schema at ${dangling}`;
    }
  }
  return pairingProblem(request?.contents ?? []);
}

function schemaProblem(schema: any, at: string): string | undefined {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema))
    return `Invalid value at '${at}': expected a Schema object.`;
  for (const [key, value] of Object.entries(schema)) {
    if (!SCHEMA_FIELDS.has(key))
      return `Invalid JSON payload received. Unknown name "${key}" at '${at}': Cannot find field.`;
    if (key === 'type' && typeof value !== 'string')
      return `Invalid JSON payload received. Invalid value at '${at}.type': expected one type.`;
  }
  for (const [index, [, child]] of Object.entries(schema.properties ?? {}).entries()) {
    const problem = schemaProblem(child, `${at}.properties[${index}].value`);
    if (problem) return problem;
  }
  if (schema.items !== undefined) {
    const problem = schemaProblem(schema.items, `${at}.items`);
    if (problem) return problem;
  }
  for (const [index, child] of (schema.anyOf ?? []).entries()) {
    const problem = schemaProblem(child, `${at}.any_of[${index}]`);
    if (problem) return problem;
  }
  return undefined;
}

/** Keywords whose values are data, not schemas: a `$ref` key inside them is a value like any other. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples', 'example']);
/** Keywords whose values map names (or patterns) to schemas: their keys are names, never keywords. */
const NAME_MAPS = new Set([
  'properties',
  'patternProperties',
  'dependentSchemas',
  'dependencies',
  '$defs',
  'definitions',
]);

/**
 * The dotted path of the first `$ref` that does not resolve within `root`, looked for in every
 * object of the schema but data values, whatever keyword holds it (so a keyword the gateway forgets
 * to walk cannot hide one); undefined when every reference resolves.
 */
function danglingReference(node: unknown, root: unknown, at: readonly string[]): string | undefined {
  if (Array.isArray(node)) {
    for (const [index, child] of node.entries()) {
      const found = danglingReference(child, root, [...at, String(index)]);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (typeof node !== 'object' || node === null) return undefined;
  const schema = node as Record<string, unknown>;
  if (typeof schema.$ref === 'string' && !resolves(root, schema.$ref)) return at.join('.') || '(root)';
  for (const [key, value] of Object.entries(schema)) {
    if (DATA_KEYWORDS.has(key)) continue;
    const named = NAME_MAPS.has(key) && typeof value === 'object' && value !== null && !Array.isArray(value);
    const children: [string[], unknown][] = named
      ? Object.entries(value).map(([name, child]) => [[...at, key, name], child])
      : [[[...at, key], value]];
    for (const [path, child] of children) {
      const found = danglingReference(child, root, path);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** True for `#` or a JSON pointer `#/…` that names an object or boolean schema inside `root`; nothing is fetched. */
function resolves(root: unknown, ref: string): boolean {
  if (ref === '#') return true;
  if (!ref.startsWith('#/')) return false;
  let current: any = root;
  for (const raw of ref.slice(2).split('/')) {
    let segment: string;
    try {
      segment = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return false;
    }
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, segment)) return false;
    current = current[segment];
  }
  return (typeof current === 'object' && current !== null) || typeof current === 'boolean';
}

function pairingProblem(contents: any[]): string | undefined {
  for (const [index, content] of contents.entries()) {
    const calls = (content?.parts ?? []).filter((part: any) => part?.functionCall);
    const next = contents[index + 1];
    const responses = (next?.parts ?? []).filter((part: any) => part?.functionResponse);
    if (calls.length === 0) {
      const previousCalls = (contents[index - 1]?.parts ?? []).filter((part: any) => part?.functionCall).length;
      const ownResponses = (content?.parts ?? []).filter((part: any) => part?.functionResponse).length;
      if (ownResponses > 0 && previousCalls === 0)
        return 'Please ensure that function response turn comes immediately after a function call turn.';
      continue;
    }
    if (content.role !== 'model')
      return 'Please ensure that function call turn comes immediately after a user turn or after a function response turn.';
    // The last content may be the model's own call turn only if nothing follows (the model would answer it).
    if (next === undefined) continue;
    if (responses.length !== calls.length) {
      return 'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.';
    }
  }
  return undefined;
}
