import { normalizeTools } from './tool-definitions';

describe(normalizeTools.name, () => {
  it('reads nested and flat definitions, dropping nameless ones', () => {
    const tools = [
      { type: 'function', function: { name: ' read ', parameters: { type: 'object' } } },
      { type: 'custom', name: 'patch' },
      { type: 'function', function: {} },
    ];
    expect(normalizeTools(tools).map((tool) => [tool.name, tool.type])).toEqual([
      ['read', 'function'],
      ['patch', 'custom'],
    ]);
  });

  it('reads a request’s tool list once: every builder of the turn gets the same result', () => {
    const tools = [{ type: 'function', function: { name: 'read' } }];
    expect(normalizeTools(tools)).toBe(normalizeTools(tools));
    expect(normalizeTools([])).toEqual([]);
  });
});
