import { OutputValidator } from '../common/json-schema/output-validator';
import type { ChatEvent } from '../core/chat-event';
import { normalizeTools } from './chat-tools';
import { StrictTools } from './strict-tools';
import { ToolChoiceRule } from './tool-choice-rule';

const strict = StrictTools.of(
  normalizeTools([
    {
      type: 'function',
      function: {
        name: 'read_file',
        strict: true,
        parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      },
    },
    { type: 'function', function: { name: 'ls', parameters: { type: 'object' } } },
  ]),
  new OutputValidator(),
);
const call = (name: string, args: object): ChatEvent => ({
  type: 'tool-call',
  call: { id: `c_${name}`, name, kind: 'function', arguments: JSON.stringify(args) },
});
const logger = { warn: () => undefined };

describe('ToolChoiceRule with strict tools', () => {
  it("meets a forced strict tool's choice only with a call its schema accepts, and says so once unmet", () => {
    const rule = ToolChoiceRule.of({ type: 'function', function: { name: 'read_file' } }, strict)!;
    expect(rule.select([call('read_file', { path: 'a.ts' })], logger)).toMatchObject({ met: true, offSchema: false });
    const refused = rule.select([call('read_file', { file: 'a.ts' })], logger);
    expect(refused).toMatchObject({ met: false, offSchema: true });
    expect(rule.unmet(3, refused.offSchema).publicMessage).toBe(
      'the model\'s calls of the tool "read_file" that tool_choice forces had arguments its strict parameters schema refuses in 3 attempts; send the request again, make the schema simpler or say in the messages what to pass, or send tool_choice "auto" to take the model\'s answer as it comes',
    );
    // A refused call beside one that meets the choice: met, and refused too.
    expect(
      rule.select([call('read_file', { path: 'a.ts' }), call('read_file', { file: 'b.ts' })], logger),
    ).toMatchObject({ met: true, offSchema: true });
    // An answer without the call is told as such.
    const none = rule.select([{ type: 'text-delta', text: 'no call' }], logger);
    expect(none).toMatchObject({ met: false, offSchema: false });
    expect(rule.unmet(3, none.offSchema).publicMessage).toMatch(
      /^the model did not call the tool "read_file" that tool_choice forces/,
    );
  });

  it('meets required with any call the schemas accept; a tool that is not strict is not checked', () => {
    const rule = ToolChoiceRule.of('required', strict)!;
    expect(rule.select([call('ls', { anything: 1 })], logger).met).toBe(true);
    expect(rule.select([call('read_file', {})], logger).met).toBe(false);
    expect(rule.unmet(2, true).publicMessage).toMatch(
      /^the model's tool calls had arguments their strict tools' parameters schemas refuse in 2 attempts, though tool_choice "required" asks for a call; send the request again, make the schema simpler/,
    );
    expect(ToolChoiceRule.of('required')!.select([call('read_file', {})], logger).met).toBe(true);
  });
});
