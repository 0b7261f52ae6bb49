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
 * - a function-call turn whose next content does not answer every call with exactly one
 *   `functionResponse` ("Please ensure that the number of function response parts is equal to
 *   the number of function call parts of the function call turn.").
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

/** The backend's error message for the first problem found, or undefined when the body is acceptable. */
export function rejectionOf(body: any): string | undefined {
  const request = body?.request;
  const configProblem = generationConfigProblem(request?.generationConfig);
  if (configProblem) return configProblem;
  const declarations: any[] = (request?.tools ?? []).flatMap((tool: any) => tool?.functionDeclarations ?? []);
  for (const [index, declaration] of declarations.entries()) {
    const at = `request.tools[0].function_declarations[${index}]`;
    if (declaration.parameters !== undefined && declaration.parametersJsonSchema !== undefined) {
      return `Invalid value at '${at}': parameters and parameters_json_schema are mutually exclusive.`;
    }
    if (declaration.parameters !== undefined) {
      const problem = schemaProblem(declaration.parameters, `${at}.parameters`);
      if (problem) return problem;
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
