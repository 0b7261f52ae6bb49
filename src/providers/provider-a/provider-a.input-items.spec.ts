import { GatewayError } from '../../core/gateway.error';
import fc from 'fast-check';
import { buildToolNameMap } from '../shared/tool-names';
import {
  normalizeCallId,
  pairCallsWithOutputs,
  RESPONSES_TOOL_NAMES,
  responsesParts,
  VALID_TOOL_NAME,
  withUpstreamToolNames,
} from './provider-a.input-items';

describe(responsesParts.name, () => {
  it('keeps text and image parts in order, with https and data URLs and a known detail', () => {
    expect(
      responsesParts(
        {
          content: [
            { type: 'text', text: 'a' },
            { type: 'image_url', image_url: { url: 'https://example.test/cat.png', detail: 'high' } },
            { type: 'image_url', image_url: 'data:image/jpeg;base64,/9j/4AAQ' },
            { type: 'input_image', image_url: 'https://example.test/dog.png', detail: 'bogus' },
          ],
        },
        0,
        true,
      ),
    ).toEqual([
      { type: 'input_text', text: 'a' },
      { type: 'input_image', image_url: 'https://example.test/cat.png', detail: 'high' },
      { type: 'input_image', image_url: 'data:image/jpeg;base64,/9j/4AAQ' },
      { type: 'input_image', image_url: 'https://example.test/dog.png' },
    ]);
  });

  it.each([
    [
      { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
      true,
      /messages\[2\]\.content\[0\]: part type "input_audio"/,
    ],
    [{ type: 'file', file: { file_data: 'x' } }, true, /part type "file"/],
    [{ type: 'image_url', image_url: { url: 'file:///etc/passwd' } }, true, /not an https URL/],
    [{ type: 'image_url', image_url: { url: 'data:text/plain;base64,AAAA' } }, true, /not an https URL/],
    [{ type: 'image_url', image_url: { url: 'https://example.test/a.png' } }, false, /an image in this message role/],
    [{ type: 'x\n"forged"' }, true, /this part type/],
  ])('refuses %j with a 400 naming where it is', (part, imagesAllowed, message) => {
    let error: unknown;
    try {
      responsesParts({ content: [part] }, 2, imagesAllowed);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe('invalid_request');
    expect((error as GatewayError).publicMessage).toMatch(message);
  });
});

const fcall = (id: string) => ({ type: 'function_call', call_id: id, name: 'f', arguments: '{}' });
const fout = (id: string) => ({ type: 'function_call_output', call_id: id, output: 'x' });
const user = { type: 'message', role: 'user', content: [] };

describe('pairCallsWithOutputs', () => {
  it('leaves complete pairs alone', () => {
    const input = [user, fcall('a'), fout('a')];
    expect(pairCallsWithOutputs(input)).toEqual({ items: input, abortedCalls: 0, orphanOutputs: 0 });
  });

  it('gives unanswered calls an aborted output of their own kind after the run of calls', () => {
    const custom = { type: 'custom_tool_call', call_id: 'c', name: 'apply_patch', input: '' };
    const result = pairCallsWithOutputs([fcall('a'), fcall('b'), custom, fout('a'), user]);
    expect(result.items).toEqual([
      fcall('a'),
      fcall('b'),
      custom,
      { type: 'function_call_output', call_id: 'b', output: 'aborted' },
      { type: 'custom_tool_call_output', call_id: 'c', output: 'aborted' },
      fout('a'),
      user,
    ]);
    expect(result.abortedCalls).toBe(2);
  });

  it('drops outputs whose call is missing or comes later', () => {
    const result = pairCallsWithOutputs([fout('gone'), user, fout('late'), fcall('late'), fout('late')]);
    expect(result.items).toEqual([user, fcall('late'), fout('late')]);
    expect(result.orphanOutputs).toBe(2);
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
