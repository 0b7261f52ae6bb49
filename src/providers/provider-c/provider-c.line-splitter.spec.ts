import { LineSplitter, LineTooLongError } from './provider-c.line-splitter';

describe(LineSplitter.name, () => {
  it('splits on \\n across chunks, strips \\r, skips empty lines and keeps split UTF-8 intact', () => {
    const splitter = new LineSplitter();
    const bytes = Buffer.from('{"a":"é"}\r\n\n{"b"', 'utf8');
    const cut = bytes.indexOf(0xc3) + 1; // inside the two-byte é
    expect(splitter.push(bytes.subarray(0, cut))).toEqual([]);
    expect(splitter.push(bytes.subarray(cut))).toEqual(['{"a":"é"}']);
    expect(splitter.push(Buffer.from(':1}\nlast'))).toEqual(['{"b":1}']);
    expect(splitter.end()).toBe('last');
    expect(splitter.end()).toBeUndefined();
  });

  it('throws when a line passes the cap', () => {
    const splitter = new LineSplitter(8);
    expect(splitter.push(Buffer.from('12345678\n'))).toEqual(['12345678']);
    expect(() => splitter.push(Buffer.from('123456789'))).toThrow(LineTooLongError);
  });
});
