import { GatewayError } from '../../core/gateway.error';
import fc from 'fast-check';
import { buildToolNameMap } from '../shared/tool-names';
import {
  assertCarriedContent,
  conversationInput,
  normalizeCallId,
  modelImageRefusal,
  RESPONSES_TOOL_NAMES,
  responsesParts,
  VALID_TOOL_NAME,
  withUpstreamToolNames,
} from './provider-a.input-items';

describe(responsesParts.name, () => {
  it('keeps text and image parts in order, with https and data URLs and a known detail', () => {
    expect(
      responsesParts({
        content: [
          { type: 'text', text: 'a' },
          { type: 'image_url', image_url: { url: 'https://example.test/cat.png', detail: 'high' } },
          { type: 'image_url', image_url: 'data:image/jpeg;base64,/9j/4AAQ' },
          { type: 'input_image', image_url: 'https://example.test/dog.png' },
        ],
      }),
    ).toEqual([
      { type: 'input_text', text: 'a' },
      { type: 'input_image', image_url: 'https://example.test/cat.png', detail: 'high' },
      { type: 'input_image', image_url: 'data:image/jpeg;base64,/9j/4AAQ' },
      { type: 'input_image', image_url: 'https://example.test/dog.png' },
    ]);
  });
});

describe(assertCarriedContent.name, () => {
  const textOnly = modelImageRefusal({ requestedId: 'luna', upstreamModel: 'gpt-7-luna' }, ['text']);
  it.each([
    [
      { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
      undefined,
      /messages\[2\]\.content\[0\]: part type "input_audio"/,
    ],
    [{ type: 'file', file: { file_data: 'x' } }, undefined, /part type "file"/],
    [{ type: 'image_url', image_url: { url: 'file:///etc/passwd' } }, undefined, /not an https URL/],
    [{ type: 'image_url', image_url: { url: 'http://example.test/a.png' } }, undefined, /not an https URL/],
    [{ type: 'image_url', image_url: { url: 'data:text/plain;base64,AAAA' } }, undefined, /not an https URL/],
    [{ type: 'x\n"forged"' }, undefined, /this part type/],
    [
      { type: 'image_url', image_url: { url: 'https://example.test/a.png' } },
      textOnly,
      /^messages\[2\]\.content\[0\]: an image is not supported by model "luna" \(upstream gpt-7-luna\), whose input_modalities are \["text"\]; remove the image, or choose a model whose input_modalities include image, see GET \/v1\/models$/,
    ],
  ])('refuses %j with a 400 naming where it is', (part, imageRefusal, message) => {
    let error: unknown;
    try {
      const earlier = { role: 'user' as const, content: 'earlier' };
      assertCarriedContent([earlier, earlier, { role: 'user', content: [part] }], imageRefusal);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe('invalid_request');
    expect((error as GatewayError).publicMessage).toMatch(message);
  });
});

describe('the images of each message role', () => {
  const image = { type: 'image_url', image_url: { url: 'https://example.test/a.png' } };
  const refusalOf = (run: () => unknown) => {
    try {
      run();
    } catch (error) {
      return (error as GatewayError).publicMessage;
    }
    return undefined;
  };

  it('refuses an image in a system or assistant message whatever the model', () => {
    for (const [role, named] of [
      ['system', 'a system'],
      ['developer', 'a developer'],
      ['assistant', 'an assistant'],
    ] as const)
      expect(refusalOf(() => assertCarriedContent([{ role, content: [image] }], undefined))).toBe(
        `messages[0].content[0]: an image in ${named} message is not supported by provider_a; move the image to a user message`,
      );
  });

  it("refuses an image in a user message or a tool result with the model's refusal when given", () => {
    const refusal = modelImageRefusal({ requestedId: 'm', upstreamModel: 'm' }, ['text']);
    const call = { id: 'c1', type: 'function', function: { name: 'shot', arguments: '{}' } };
    expect(refusalOf(() => assertCarriedContent([{ role: 'user', content: [image] }], refusal))).toMatch(
      /^messages\[0\]\.content\[0\]: an image is not supported by model "m"/,
    );
    const history = [
      { role: 'assistant' as const, content: null, tool_calls: [call] },
      { role: 'tool' as const, tool_call_id: 'c1', content: [image] },
    ];
    expect(refusalOf(() => assertCarriedContent(history, refusal))).toMatch(
      /^messages\[1\]\.content\[0\]: an image is not supported by model "m"/,
    );
    expect(refusalOf(() => assertCarriedContent(history, undefined))).toBeUndefined();
    expect(conversationInput(history, new Set()).items.at(-1)).toMatchObject({
      output: [{ type: 'input_image', image_url: image.image_url.url }],
    });
  });
});

describe(modelImageRefusal.name, () => {
  const model = { requestedId: 'gpt-7-luna', upstreamModel: 'gpt-7-luna' };

  it('refuses nothing when the modalities include image or are unknown', () => {
    expect(modelImageRefusal(model, ['text', 'image'])).toBeUndefined();
    expect(modelImageRefusal(model, undefined)).toBeUndefined();
  });

  it('names the model once when it was asked for by its own id, and the param is messages', () => {
    const error = modelImageRefusal(model, ['text'])!('messages[0].content[1]');
    expect(error.publicMessage).toMatch(
      /^messages\[0\]\.content\[1\]: an image is not supported by model "gpt-7-luna", whose/,
    );
    expect(error.param).toBe('messages');
  });
});

describe(`${conversationInput.name}: system texts`, () => {
  it('collects system and developer texts in order and leaves out empty ones', () => {
    const input = conversationInput(
      [
        { role: 'system', content: '' },
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: '' }] },
        { role: 'developer', content: 'Answer in French.' },
        { role: 'user', content: 'hi' },
      ],
      new Set(),
    );
    expect(input.systemTexts).toEqual(['Be brief.', 'Answer in French.']);
  });
});

describe(`${conversationInput.name}: calls and their outputs`, () => {
  const call = (id: string, name: string) => ({ id, type: 'function', function: { name, arguments: '' } });
  const patch = (id: string) => ({ id, type: 'custom', custom: { name: 'apply_patch', input: 'PATCH' } });
  const result = (id: string, content: string) => ({ role: 'tool' as const, tool_call_id: id, content });
  const fcall = (id: string, name: string) => ({ type: 'function_call', call_id: id, name, arguments: '{}' });
  const ccall = (id: string) => ({ type: 'custom_tool_call', call_id: id, name: 'apply_patch', input: 'PATCH' });
  const fout = (id: string, output: string) => ({ type: 'function_call_output', call_id: id, output });
  const cout = (id: string, output: string) => ({ type: 'custom_tool_call_output', call_id: id, output });

  it('puts each output right after the calls of its message, in call order, with an aborted one for an unanswered call of its own kind', () => {
    const input = conversationInput(
      [
        { role: 'assistant', content: 'Working.', tool_calls: [call('a', 'f'), call('b', 'g'), patch('c')] },
        result('b', 'R-B'),
        { role: 'user', content: 'stop' },
        result('gone', 'ORPHAN'),
      ],
      new Set(),
    );
    expect(input.items).toEqual([
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Working.' }] },
      fcall('a', 'f'),
      fcall('b', 'g'),
      ccall('c'),
      fout('a', 'aborted'),
      fout('b', 'R-B'),
      cout('c', 'aborted'),
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'stop' }] },
    ]);
    expect(input).toMatchObject({ abortedCalls: 2, orphanOutputs: 1 });
  });

  it("gives an output its own call's kind when two turns reuse one call id", () => {
    const input = conversationInput(
      [
        { role: 'assistant', content: null, tool_calls: [call('call_0', 'read')] },
        result('call_0', 'R-A'),
        { role: 'assistant', content: null, tool_calls: [patch('call_0')] },
        result('call_0', 'R-B'),
      ],
      new Set(),
    );
    expect(input.items).toEqual([
      fcall('call_0', 'read'),
      fout('call_0', 'R-A'),
      ccall('call_0'),
      cout('call_0', 'R-B'),
    ]);
  });
});

describe(normalizeCallId.name, () => {
  it('normalizes call ids over 64 characters to their SHA-256 hex and keeps shorter ones', () => {
    expect(normalizeCallId('call_' + 'a'.repeat(70))).toBe(
      '04ce2191371fcc8c505c461d9b417d038242cec75f94e2ba6a9b85851d8e949d',
    );
    expect(normalizeCallId('x'.repeat(64))).toBe('x'.repeat(64));
  });
});

describe('provider_a tool names', () => {
  it('round-trips any set of client names through valid, unique upstream names (property)', () => {
    const name = fc.oneof(
      fc.string({ minLength: 0, maxLength: 120 }),
      fc.stringMatching(/^[a-zA-Z0-9_-]{1,64}$/),
      fc
        .tuple(fc.stringMatching(/^[a-z_]{1,40}$/), fc.stringMatching(/^[a-z_.]{1,60}$/))
        .map(([server, tool]) => `mcp__${server}__${tool}`),
    );
    fc.assert(
      fc.property(fc.uniqueArray(name, { maxLength: 30 }), (names) => {
        const map = buildToolNameMap(names, RESPONSES_TOOL_NAMES);
        const upstream = names.map((entry) => map.toUpstream(entry));
        for (const entry of upstream) expect(entry).toMatch(VALID_TOOL_NAME);
        expect(new Set(upstream).size).toBe(names.length);
        for (const entry of names) expect(map.toClient(map.toUpstream(entry))).toBe(entry);
        // Deterministic: the same set in another order gives the same names.
        const again = buildToolNameMap([...names].reverse(), RESPONSES_TOOL_NAMES);
        for (const entry of names) expect(again.toUpstream(entry)).toBe(map.toUpstream(entry));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps valid names, the mcp__ prefix and the tail of a long MCP name', () => {
    const long = 'mcp__a_very_long_server_name_that_goes_on_and_on__list_all_open_pull_requests';
    const map = buildToolNameMap(['read_file', long, 'fs.read'], RESPONSES_TOOL_NAMES);
    expect(map.toUpstream('read_file')).toBe('read_file');
    expect(map.toUpstream(long)).toMatch(/^mcp__.*list_all_open_pull_requests_[0-9a-f]{8}$/);
    expect(map.toUpstream('fs.read')).toMatch(/^fs_read_[0-9a-f]{8}$/);
    expect(map.renamed).toBe(2);
  });

  it('keeps a renamed name within 64 characters when only the hash suffix would push it over', () => {
    const name = `mcp__srv__${'a'.repeat(48)}.x`;
    expect(name).toHaveLength(60);
    const map = buildToolNameMap([name], RESPONSES_TOOL_NAMES);
    expect(map.toUpstream(name)).toMatch(VALID_TOOL_NAME);
    expect(map.toClient(map.toUpstream(name))).toBe(name);
  });

  it('never renames into a name the client already uses', () => {
    const map = buildToolNameMap(['a.b'], RESPONSES_TOOL_NAMES);
    const taken = map.toUpstream('a.b');
    const both = buildToolNameMap(['a.b', taken], RESPONSES_TOOL_NAMES);
    expect(both.toUpstream(taken)).toBe(taken);
    expect(both.toUpstream('a.b')).not.toBe(taken);
    expect(both.toUpstream('a.b')).toMatch(VALID_TOOL_NAME);
  });

  it('leaves a body without invalid names untouched (same object)', () => {
    const body = { tools: [{ type: 'function', name: 'ok' }], input: [] };
    expect(withUpstreamToolNames(body).body).toBe(body);
  });
});
