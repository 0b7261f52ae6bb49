import { blockToToolCall, CrossChannelDuplicates, newToolCallId } from './provider-c.tool-calls';

const kinds = new Map<string, 'function' | 'custom'>([
  ['read_file', 'function'],
  ['apply_patch', 'custom'],
]);
const id = () => 'call_x';

describe(blockToToolCall.name, () => {
  it('compacts object arguments for function tools and defaults absent or null ones to {}', () => {
    expect(blockToToolCall({ name: 'read_file', arguments: { path: 'a', n: [1, 2] } }, kinds, id)).toEqual({
      ok: true,
      call: { id: 'call_x', name: 'read_file', kind: 'function', arguments: '{"path":"a","n":[1,2]}' },
    });
    expect(blockToToolCall({ name: 'read_file' }, kinds, id)).toMatchObject({ call: { arguments: '{}' } });
    expect(blockToToolCall({ name: 'read_file', arguments: null }, kinds, id)).toMatchObject({
      call: { arguments: '{}' },
    });
    expect(blockToToolCall({ name: 'read_file', arguments: '{"path":"b"}' }, kinds, id)).toMatchObject({
      call: { arguments: '{"path":"b"}' },
    });
  });

  it('returns an undeclared name as a function call', () => {
    expect(blockToToolCall({ name: 'mystery', arguments: {} }, kinds, id)).toMatchObject({
      ok: true,
      call: { name: 'mystery', kind: 'function' },
    });
  });

  it('reads custom input from a string arguments, else input, else the JSON of arguments', () => {
    expect(blockToToolCall({ name: 'apply_patch', arguments: '*** Begin Patch' }, kinds, id)).toMatchObject({
      call: { kind: 'custom', input: '*** Begin Patch' },
    });
    expect(blockToToolCall({ name: 'apply_patch', input: 'raw' }, kinds, id)).toMatchObject({ call: { input: 'raw' } });
    expect(blockToToolCall({ name: 'apply_patch', arguments: { a: 1 } }, kinds, id)).toMatchObject({
      call: { input: '{"a":1}' },
    });
  });

  it('names the declared tool the block names: exactly, else once white space around both is dropped', () => {
    const spaced = new Map<string, 'function' | 'custom'>([
      ['read_file', 'function'],
      [' read_file ', 'function'],
      [' apply_patch', 'custom'],
    ]);
    const nameOf = (name: string) =>
      (blockToToolCall({ name, arguments: {} }, spaced, id) as { call: { name: string } }).call;
    expect(nameOf(' read_file ')).toMatchObject({ name: ' read_file ' });
    expect(nameOf('read_file')).toMatchObject({ name: 'read_file' });
    expect(nameOf('read_file\n')).toMatchObject({ name: 'read_file' });
    expect(nameOf('apply_patch ')).toMatchObject({ name: ' apply_patch', kind: 'custom', input: '{}' });
    expect(nameOf(' mystery ')).toMatchObject({ name: 'mystery', kind: 'function' });
  });

  it('rejects non-objects, and leaves a missing name to the chat layer (which drops a call without arguments too, else fails the turn)', () => {
    expect(blockToToolCall([1], kinds, id)).toEqual({ ok: false, reason: 'not_object' });
    expect(blockToToolCall({ name: '  ', arguments: {} }, kinds, id)).toEqual({
      ok: true,
      call: { id: 'call_x', name: '', kind: 'function', arguments: '{}' },
    });
    expect(blockToToolCall({ arguments: { path: 'a' } }, kinds, id)).toEqual({
      ok: true,
      call: { id: 'call_x', name: '', kind: 'function', arguments: '{"path":"a"}' },
    });
  });
});

describe(newToolCallId.name, () => {
  it('is call_ + 24 lowercase hex, fresh every time', () => {
    const ids = new Set(Array.from({ length: 50 }, () => newToolCallId()));
    expect(ids.size).toBe(50);
    for (const value of ids) expect(value).toMatch(/^call_[0-9a-f]{24}$/);
  });
});

describe(CrossChannelDuplicates.name, () => {
  it('skips a call already emitted from the other channel, comparing canonical arguments', () => {
    const duplicates = new CrossChannelDuplicates();
    expect(duplicates.admit('reasoning', { name: 'f', kind: 'function', arguments: '{"a":1,"b":2}' })).toBe(true);
    expect(duplicates.admit('content', { name: 'f', kind: 'function', arguments: '{ "b": 2, "a": 1 }' })).toBe(false);
    expect(duplicates.admit('content', { name: 'f', kind: 'function', arguments: '{"a":2}' })).toBe(true);
    expect(duplicates.admit('content', { name: 'f', kind: 'function', arguments: '{"a":2}' })).toBe(true);
    expect(duplicates.admit('reasoning', { name: 'f', kind: 'function', arguments: '{"a":2}' })).toBe(false);
  });

  it('forgets the calls recorded since a mark on rewind, so the other channel may emit them again; earlier ones still count', () => {
    const duplicates = new CrossChannelDuplicates();
    const kept = { name: 'f', kind: 'function', arguments: '{"a":1}' } as const;
    const dropped = { name: 'f', kind: 'function', arguments: '{"a":2}' } as const;
    expect(duplicates.admit('reasoning', kept)).toBe(true);
    const mark = duplicates.mark();
    expect(duplicates.admit('reasoning', dropped)).toBe(true);
    duplicates.rewind(mark);
    expect(duplicates.admit('content', dropped)).toBe(true);
    expect(duplicates.admit('content', kept)).toBe(false);
  });
});
