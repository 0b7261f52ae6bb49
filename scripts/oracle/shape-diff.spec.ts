import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLAUDE_FIXTURES } from './claude-check';
import { CLAUDE_CODE, pinnedVersion } from './oracle-clis';
import {
  diffFacts,
  diffRecorded,
  distinctRecorded,
  headerFacts,
  jsonFacts,
  streamJsonFacts,
  versionsIn,
} from './shape-diff';
import type { Recorded } from './shape-diff';

// The comparison every oracle check uses (docs/providers.md, "Following the upstream CLIs").
describe('shape-diff', () => {
  describe('jsonFacts', () => {
    it('lists each leaf path with its JSON type, and kind fields with their value', () => {
      const facts = jsonFacts({ type: 'response.create', stream: true, reasoning: { effort: 'low' }, n: null });
      expect(Object.fromEntries([...facts].map(([key, values]) => [key, [...values]]))).toEqual({
        type: ['"response.create"'],
        stream: ['boolean'],
        'reasoning.effort': ['string'],
        n: ['null'],
      });
    });

    it('keeps array items of different kinds apart and tells empty containers from missing keys', () => {
      const facts = jsonFacts({
        input: [
          { type: 'message', role: 'user', content: [] },
          { type: 'function_call', arguments: '{}' },
        ],
        tools: [],
        metadata: {},
        tags: ['a', 'b'],
      });
      expect([...facts.keys()].sort()).toEqual([
        'input[function_call].arguments',
        'input[function_call].type',
        'input[message].content',
        'input[message].role',
        'input[message].type',
        'metadata',
        'tags[]',
        'tools',
      ]);
      expect([...facts.get('input[message].role')!]).toEqual(['"user"']);
      expect([...facts.get('tools')!]).toEqual(['array']);
      expect([...facts.get('metadata')!]).toEqual(['object']);
    });

    it('records values when asked (setup bodies, model lists)', () => {
      const facts = jsonFacts({ ideVersion: '0.61.0', levels: ['low', 'high'] }, { byValue: true });
      expect([...facts.get('ideVersion')!]).toEqual(['"0.61.0"']);
      expect([...facts.get('levels[]')!].sort()).toEqual(['"high"', '"low"']);
    });
  });

  describe('headerFacts', () => {
    it('keeps values, only the versions of version-carrying ones and only the presence of ids and tokens', () => {
      const facts = headerFacts(
        {
          'User-Agent': 'codex_exec/0.169.0 (Debian 12.0.0; x86_64) unknown (codex_exec; 0.169.0)',
          'x-client-request-id': '01a20a0b-d46e-7ec0-af50-466cf93f7c1e',
          'accept-encoding': 'zstd,gzip',
          authorization: 'Bearer <access_token>',
          version: '0.169.0',
          host: '127.0.0.1:1234',
        },
        { ignore: new Set(['host']) },
      );
      expect(Object.fromEntries([...facts].map(([key, values]) => [key, [...values]]))).toEqual({
        'header user-agent': ['codex_exec/0.169.0'],
        'header x-client-request-id': ['present'],
        'header accept-encoding': ['zstd,gzip'],
        'header authorization': ['present'],
        'header version': ['0.169.0'],
      });
    });

    it("masks Node's own version, which belongs to the machine and not to the CLI", () => {
      const facts = headerFacts({ 'x-goog-api-client': 'gl-node/20.20.2' }, { allValues: true });
      expect([...facts.get('header x-goog-api-client')!]).toEqual(['gl-node/<node>']);
    });

    it('finds product/version tokens and bare versions', () => {
      expect(versionsIn('GeminiCLI-tui/0.61.0/gemini-2.5-pro (linux; x64) google-api-nodejs-client/10.9.0')).toEqual([
        'GeminiCLI-tui/0.61.0',
        'google-api-nodejs-client/10.9.0',
      ]);
      expect(versionsIn('2.1.330')).toEqual(['2.1.330']);
      expect(versionsIn('application/json')).toEqual([]);
    });
  });

  describe('diffFacts', () => {
    it('reports added, removed and changed keys, nothing for equal ones', () => {
      const committed = jsonFacts({ a: 1, b: 'x', c: true });
      const fresh = jsonFacts({ a: 1, b: 2, d: null });
      expect(diffFacts('here', committed, fresh)).toEqual([
        { where: 'here', change: 'changed', key: 'b', committed: ['string'], fresh: ['number'] },
        { where: 'here', change: 'removed', key: 'c', committed: ['boolean'] },
        { where: 'here', change: 'added', key: 'd', fresh: ['null'] },
      ]);
    });
  });

  describe('diffRecorded', () => {
    const request = (identity: string, body: unknown): Recorded => ({ identity, facts: jsonFacts(body) });

    it('pairs requests by identity and occurrence, so one new request does not shift the others', () => {
      const committed = [request('GET /a', { x: 1 }), request('POST /b', { y: 'z' })];
      const fresh = [request('GET /new', {}), request('GET /a', { x: 1 }), request('POST /b', { y: 'z' })];
      expect(diffRecorded('capture', committed, fresh)).toEqual([
        { where: 'capture · GET /new #1', change: 'added', key: 'request', fresh: ['GET /new'] },
      ]);
    });

    it('reports a request the fresh run no longer sends', () => {
      const committed = [request('POST /b', {}), request('POST /b', {})];
      expect(diffRecorded('capture', committed, [request('POST /b', {})])).toEqual([
        { where: 'capture · POST /b #2', change: 'removed', key: 'request', committed: ['POST /b'] },
      ]);
    });

    it('drops repeats of an identical request', () => {
      const items = [
        request('GET /models', { a: 1 }),
        request('GET /models', { a: 2 }),
        request('GET /models', { a: 3 }),
      ];
      expect(distinctRecorded(items)).toHaveLength(1);
      expect(distinctRecorded([...items, request('GET /models', { a: 'text' })])).toHaveLength(2);
    });
  });

  describe('streamJsonFacts on the captured Claude Code output of the pinned version', () => {
    const dir = path.join(CLAUDE_FIXTURES, `claude-code-${pinnedVersion(CLAUDE_CODE)}`);
    const text = fs.readFileSync(path.join(dir, 'text.jsonl'), 'utf8');
    const lines = text.split('\n').filter((line) => line !== '');

    it('shows no drift when a capture is compared with itself', () => {
      for (const name of fs.readdirSync(dir).filter((file) => file.endsWith('.jsonl'))) {
        const capture = fs.readFileSync(path.join(dir, name), 'utf8');
        expect(diffFacts(name, streamJsonFacts(capture), streamJsonFacts(capture))).toEqual([]);
      }
    });

    it('names each event kind, with subtype for system lines and the inner type for stream events', () => {
      const keys = [...streamJsonFacts(text).keys()];
      expect(keys).toContain('event system/init');
      expect(keys).toContain('event stream_event:content_block_delta');
      expect(keys).toContain('event stream_event:content_block_delta event.delta.text');
      expect(keys).toContain('event result/success');
    });

    it('shows exactly a new field of the init event', () => {
      const changed = lines
        .map((line) => {
          const event = JSON.parse(line) as Record<string, unknown>;
          return JSON.stringify(event.subtype === 'init' ? { ...event, new_capability_flag: false } : event);
        })
        .join('\n');
      expect(diffFacts('text.jsonl', streamJsonFacts(text), streamJsonFacts(changed))).toEqual([
        {
          where: 'text.jsonl',
          change: 'added',
          key: 'event system/init new_capability_flag',
          fresh: ['boolean'],
        },
      ]);
    });

    it('shows exactly a new event kind and its fields', () => {
      const changed = `${text}${JSON.stringify({ type: 'system', subtype: 'hook_notice', hook: 'Stop' })}\n`;
      expect(diffFacts('text.jsonl', streamJsonFacts(text), streamJsonFacts(changed))).toEqual([
        { where: 'text.jsonl', change: 'added', key: 'event system/hook_notice', fresh: ['present'] },
        { where: 'text.jsonl', change: 'added', key: 'event system/hook_notice hook', fresh: ['string'] },
        { where: 'text.jsonl', change: 'added', key: 'event system/hook_notice subtype', fresh: ['"hook_notice"'] },
        { where: 'text.jsonl', change: 'added', key: 'event system/hook_notice type', fresh: ['"system"'] },
      ]);
    });

    it('shows a line that is not JSON', () => {
      expect(diffFacts('text.jsonl', streamJsonFacts(text), streamJsonFacts(`${text}Update available!\n`))).toEqual([
        { where: 'text.jsonl', change: 'added', key: 'line', fresh: ['not JSON'] },
      ]);
    });
  });
});
