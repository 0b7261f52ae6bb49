/**
 * Open-ended replies for `npm run demo`: each fake upstream answers any conversation like a
 * model would — first a call to the first offered tool, then, once a tool result is in the
 * history, a final text answer — in its own wire format.
 */
import type { FakeFrame } from '../test/support/fake-provider-a';
import { completed, created, functionCallItem, reasoningDelta, textDelta } from '../test/support/provider-a-fixtures';

const words = (text: string) => text.split(' ').map((word, index, all) => (index < all.length - 1 ? `${word} ` : word));

/** Example arguments for a JSON schema: every property filled with a plausible value. */
export function exampleFor(schema: Record<string, any> | undefined): unknown {
  if (!schema) return {};
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  switch (schema.type) {
    case 'object':
      return Object.fromEntries(
        Object.entries(schema.properties ?? {}).map(([name, child]) => [
          name,
          exampleFor(child as Record<string, any>),
        ]),
      );
    case 'array':
      return [exampleFor(schema.items)];
    case 'integer':
    case 'number':
      return 42;
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return 'README.md';
  }
}

let callCounter = 0;

/**
 * The client tools of a Responses body in either shape the gateway sends: classic (`tools`) or
 * Responses lite (an `additional_tools` input item whose `functions` namespace holds them; the
 * gpt-5.6 and gpt-6.1 models take lite).
 */
function offeredTools(body: Record<string, any>): any[] {
  if (Array.isArray(body.tools)) return body.tools;
  const item = Array.isArray(body.input)
    ? body.input.find((entry: any) => entry.type === 'additional_tools')
    : undefined;
  return item?.tools?.find((entry: any) => entry.type === 'namespace' && entry.name === 'functions')?.tools ?? [];
}

/** provider_a (Responses events): extraction → a JSON object for the schema; tools → one call; else text. */
export function providerAResponder(body: Record<string, any>): FakeFrame[] {
  const format = body.text?.format;
  if (format?.type === 'json_schema') {
    return [created('resp_demo'), textDelta(JSON.stringify(exampleFor(format.schema))), completed()];
  }
  const input: any[] = Array.isArray(body.input) ? body.input : [];
  const answered = input.some(
    (item) => item.type === 'function_call_output' || item.type === 'custom_tool_call_output',
  );
  const tool = offeredTools(body).find((entry: any) => entry.type === 'function' && entry.name);
  if (tool && !answered) {
    const args = JSON.stringify(exampleFor(tool.parameters));
    return [
      created('resp_demo'),
      textDelta('Let me look that up.'),
      ...functionCallItem(`call_demo_${++callCounter}`, tool.name, args),
      completed(),
    ];
  }
  const text = answered
    ? 'The tool result arrived; this is the final answer from the fake Codex backend.'
    : 'Hello from the fake Codex backend, streamed through the gateway.';
  return [
    created('resp_demo'),
    reasoningDelta('Thinking briefly.'),
    ...words(text).map((word) => textDelta(word, 'msg_1', 40)),
    completed(),
  ];
}

/** provider_b (Code Assist payloads): tools → one functionCall with a thought signature; else text. */
export function providerBResponder(envelope: Record<string, any>): unknown[] {
  const request = envelope.request ?? {};
  const contents: any[] = request.contents ?? [];
  const answered = contents.some((content) => (content.parts ?? []).some((part: any) => part.functionResponse));
  const declaration = request.tools?.[0]?.functionDeclarations?.[0];
  const payload = (parts: unknown[], finishReason?: string) => ({
    response: {
      candidates: [{ content: { role: 'model', parts }, ...(finishReason ? { finishReason } : {}) }],
      ...(finishReason
        ? { usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 8, totalTokenCount: 20 } }
        : {}),
    },
  });
  if (declaration && !answered) {
    const call = {
      functionCall: {
        id: `call_gemini_${++callCounter}`,
        name: declaration.name,
        args: exampleFor(declaration.parametersJsonSchema ?? declaration.parameters),
      },
      thoughtSignature: 'demo-signature',
    };
    return [payload([{ text: 'Let me look that up. ' }]), payload([call], 'STOP')];
  }
  const text = answered
    ? 'The tool result arrived; this is the final answer from the fake Gemini backend.'
    : 'Hello from the fake Gemini Code Assist backend.';
  return [
    payload([{ text: 'Considering the question.', thought: true }]),
    ...words(text).map((word) => payload([{ text: word }])),
    payload([], 'STOP'),
  ];
}
