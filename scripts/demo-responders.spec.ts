import { toolsOf } from '../src/providers/provider-b/provider-b.tools';
import { providerBResponder } from './demo-responders';

describe(providerBResponder.name, () => {
  it('calls the first tool with arguments built from the schema the gateway declared', () => {
    // The declaration as the gateway sends it (its field name included), not a hand-written copy.
    const { declarations } = toolsOf([
      {
        type: 'function',
        name: 'read_file',
        parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
        raw: { type: 'function', function: { name: 'read_file' } },
      },
    ]);
    const chunks = providerBResponder({
      request: {
        contents: [{ role: 'user', parts: [{ text: 'read it' }] }],
        tools: [{ functionDeclarations: declarations }],
      },
    }) as {
      response: { candidates: { content: { parts: { functionCall?: { name: string; args: unknown } }[] } }[] };
    }[];
    const call = chunks
      .flatMap((chunk) => chunk.response.candidates[0].content.parts)
      .find((part) => part.functionCall);
    expect(call?.functionCall).toMatchObject({ name: 'read_file', args: { path: 'README.md' } });
  });
});
