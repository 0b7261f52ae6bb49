import { ToolCallCollector } from './tool-call-collector';

describe(ToolCallCollector.name, () => {
  it('renders function calls with indices in arrival order and keeps upstream ids', () => {
    const collector = new ToolCallCollector('req-1', 'function');
    collector.add({ id: 'call_b', name: 'read_file', kind: 'function', arguments: '{"path":"a.ts"}' });
    collector.add({ id: 'call_a', name: 'ls', kind: 'function', arguments: '{}' });
    expect(collector.valid).toEqual([
      { index: 0, id: 'call_b', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.ts"}' } },
      { index: 1, id: 'call_a', type: 'function', function: { name: 'ls', arguments: '{}' } },
    ]);
  });

  it('synthesizes call_<sanitized request id>_<n> for a missing id and turns blank arguments into {}', () => {
    const collector = new ToolCallCollector('req:1/ab', 'function');
    collector.add({ name: 'ls', kind: 'function', arguments: '  ' });
    expect(collector.valid[0]).toMatchObject({ id: 'call_req1ab_0', function: { name: 'ls', arguments: '{}' } });
  });

  it('drops a call with unparsable JSON next to a valid one, and reports all-invalid turns', () => {
    const invalid: unknown[] = [];
    const collector = new ToolCallCollector('r', 'function', (index, reason) => invalid.push([index, reason]));
    collector.add({ id: 'x', name: 'bad', kind: 'function', arguments: '{"a":' });
    collector.add({ id: 'y', name: 'good', kind: 'function', arguments: '{"a":1}' });
    expect(collector.valid.map((call) => call.id)).toEqual(['y']);
    expect(collector.valid[0].index).toBe(0);
    expect(collector.allInvalid).toBe(false);
    expect(invalid).toEqual([[0, 'invalid_json_arguments']]);

    const onlyBad = new ToolCallCollector('r', 'function');
    onlyBad.add({ id: 'x', name: 'bad', kind: 'function', arguments: 'nope' });
    expect(onlyBad.allInvalid).toBe(true);
  });

  it('rejects an empty name and ignores a repeated id', () => {
    const collector = new ToolCallCollector('r', 'function');
    collector.add({ id: 'a', name: ' ', kind: 'function', arguments: '{}' });
    collector.add({ id: 'b', name: 'ls', kind: 'function', arguments: '{}' });
    collector.add({ id: 'b', name: 'ls', kind: 'function', arguments: '{}' });
    expect(collector.valid).toHaveLength(1);
  });

  it('renders custom calls as function calls on the default wire and as custom on the custom wire', () => {
    const patch = '*** Begin Patch\n*** End Patch';
    const functionWire = new ToolCallCollector('r', 'function');
    functionWire.add({ id: 'c1', name: 'apply_patch', kind: 'custom', input: patch });
    expect(functionWire.valid[0]).toEqual({ index: 0, id: 'c1', type: 'function', function: { name: 'apply_patch', arguments: patch } });

    const customWire = new ToolCallCollector('r', 'custom');
    customWire.add({ id: 'c1', name: 'apply_patch', kind: 'custom', input: patch });
    expect(customWire.valid[0]).toEqual({ index: 0, id: 'c1', type: 'custom', custom: { name: 'apply_patch', input: patch } });
  });

  it('carries a thought signature as extra_content.google.thought_signature', () => {
    const collector = new ToolCallCollector('r', 'function');
    collector.add({ id: 'g1', name: 'ls', kind: 'function', arguments: '{}', thoughtSignature: 'sig-1' });
    expect(collector.valid[0].extra_content).toEqual({ google: { thought_signature: 'sig-1' } });
  });
});
