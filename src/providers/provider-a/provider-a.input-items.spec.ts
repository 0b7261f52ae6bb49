import { GatewayError } from '../../core/gateway.error';
import { normalizeCallId, pairCallsWithOutputs, responsesParts } from './provider-a.input-items';

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
