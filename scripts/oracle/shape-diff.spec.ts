import * as crypto from 'node:crypto';
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
    it('lists each leaf path with its value', () => {
      const facts = jsonFacts({ type: 'response.create', stream: true, reasoning: { effort: 'low' }, n: null });
      expect(Object.fromEntries([...facts].map(([key, values]) => [key, [...values]]))).toEqual({
        type: ['"response.create"'],
        stream: ['true'],
        'reasoning.effort': ['"low"'],
        n: ['null'],
      });
    });

    it('shows a changed enum or boolean value, not only a changed JSON type', () => {
      const committed = jsonFacts({ store: false, tool_choice: 'auto', include: ['reasoning.encrypted_content'] });
      const fresh = jsonFacts({ store: true, tool_choice: 'required', include: ['reasoning.summary'] });
      expect(diffFacts('here', committed, fresh).map(({ key, committed, fresh }) => [key, committed, fresh])).toEqual([
        ['include[]', ['"reasoning.encrypted_content"'], ['"reasoning.summary"']],
        ['store', ['false'], ['true']],
        ['tool_choice', ['"auto"'], ['"required"']],
      ]);
    });

    it('lists only JSON types, and kind fields with their value, when asked for types', () => {
      const facts = jsonFacts(
        { type: 'response.create', stream: true, reasoning: { effort: 'low' }, n: null },
        { compare: 'types' },
      );
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
      expect([...facts.get('tags[]')!].sort()).toEqual(['"a"', '"b"']);
    });

    it('takes what differs from run to run by nature as no drift: ids, clocks, durations, paths, signatures', () => {
      const run = (id: string, clock: number, ms: number, token: string) => ({
        session_id: id,
        turn_metadata: JSON.stringify({ installation_id: id, request_kind: 'prewarm' }),
        call_id: `list_directory_${clock}_0`,
        request_start_ms: String(clock),
        timestamp: new Date(clock).toISOString(),
        message_id: `msg_${token}`,
        signature: token,
        duration_ms: ms,
        cwd: `/tmp/capture-${token.slice(0, 6)}`,
        result: `request-id req_${token}, first after ${ms} ms; check your inference gateway (127.0.0.1:${ms + 40000})`,
        instructions: `<${ms * 100} chars>`,
      });
      const committed = jsonFacts(
        run('01a2205e-9cb2-7ca2-a939-e51d0db8949a', 1795839401909, 39, 'ab1796050590434cdef01234'),
      );
      const fresh = jsonFacts(
        run('8ab9ace1-777c-4dd3-94b9-5a5df2c524ae', 1796050550369, 11, 'X35Gd5zzwYVhp5MHZNzMFQr8'),
      );
      expect(diffFacts('here', committed, fresh)).toEqual([]);
    });

    it('still shows an id that appears or disappears, and any other text around an id', () => {
      const committed = jsonFacts({ turn_id: '', note: 'thread 01a2205e-9cb2-7ca2-a939-e51d0db8949a new' });
      const fresh = jsonFacts({
        turn_id: '01a2205e-9cb2-7ca2-a939-e51d0db8949a',
        note: 'thread 01a2205e-9cb2-7ca2-a939-e51d0db8949a resumed',
      });
      expect(diffFacts('here', committed, fresh).map(({ key, committed, fresh }) => [key, committed, fresh])).toEqual([
        ['note', ['"thread <uuid> new"'], ['"thread <uuid> resumed"']],
        ['turn_id', ['""'], ['"<uuid>"']],
      ]);
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
        { where: 'here', change: 'changed', key: 'b', committed: ['"x"'], fresh: ['2'] },
        { where: 'here', change: 'removed', key: 'c', committed: ['true'] },
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
        request('GET /models', { a: 1 }),
        request('GET /models', { a: 1 }),
      ];
      expect(distinctRecorded(items)).toHaveLength(1);
      expect(distinctRecorded([...items, request('GET /models', { a: 2 })])).toHaveLength(2);
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
          fresh: ['false'],
        },
      ]);
    });

    it('shows exactly a new event kind and its fields', () => {
      const changed = `${text}${JSON.stringify({ type: 'system', subtype: 'hook_notice', hook: 'Stop' })}\n`;
      expect(diffFacts('text.jsonl', streamJsonFacts(text), streamJsonFacts(changed))).toEqual([
        { where: 'text.jsonl', change: 'added', key: 'event system/hook_notice', fresh: ['present'] },
        { where: 'text.jsonl', change: 'added', key: 'event system/hook_notice hook', fresh: ['"Stop"'] },
        { where: 'text.jsonl', change: 'added', key: 'event system/hook_notice subtype', fresh: ['"hook_notice"'] },
        { where: 'text.jsonl', change: 'added', key: 'event system/hook_notice type', fresh: ['"system"'] },
      ]);
    });

    /** `name` of the pinned fixtures with `edit` applied to each of its lines. */
    const edited = (name: string, edit: (event: Record<string, any>) => void): string =>
      fs
        .readFileSync(path.join(dir, name), 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => {
          const event = JSON.parse(line) as Record<string, any>;
          edit(event);
          return JSON.stringify(event);
        })
        .join('\n');
    const changes = (name: string, edit: (event: Record<string, any>) => void): string[][] =>
      diffFacts(
        name,
        streamJsonFacts(fs.readFileSync(path.join(dir, name), 'utf8')),
        streamJsonFacts(edited(name, edit)),
      ).map((difference) => [difference.key, ...(difference.committed ?? []), '→', ...(difference.fresh ?? [])]);

    it('shows the error values the gateway reads: api_error, error, api_error_status, stop_reason, terminal_reason, is_error', () => {
      const keys = changes('long-context-429.jsonl', (event) => {
        if (event.type === 'assistant' && event.error) {
          event.error = 'unknown';
          event.api_error = 'usage_limit_reached';
          event.api_error_status = 400;
        }
        if (event.type === 'result') {
          event.stop_reason = 'end_turn';
          event.terminal_reason = 'completed';
          event.is_error = false;
        }
      }).map(([key]) => key);
      expect(keys).toEqual(
        expect.arrayContaining([
          'event assistant error',
          'event assistant api_error',
          'event assistant api_error_status',
          'event result/success stop_reason',
          'event result/success terminal_reason',
          'event result/success is_error',
        ]),
      );
    });

    it('shows the rate-limit values the gateway reads: rateLimitType and status', () => {
      expect(
        changes('limit-429.jsonl', (event) => {
          if (event.type === 'rate_limit_event') {
            event.rate_limit_info.rateLimitType = 'seven_day';
            event.rate_limit_info.status = 'allowed_warning';
          }
        }),
      ).toEqual([
        ['event rate_limit_event rate_limit_info.rateLimitType', '"five_hour"', '→', '"seven_day"'],
        ['event rate_limit_event rate_limit_info.status', '"rejected"', '→', '"allowed_warning"'],
      ]);
    });

    it('shows no drift for what another run of the same case prints differently (ids, clocks, durations, paths)', () => {
      // Other ids than the fixture's, fixed so that the test is the same on every run.
      let count = 0;
      const hex = (): string => crypto.createHash('sha256').update(String(count++)).digest('hex');
      const uuid = (): string => hex().replace(/^(.{8})(.{4}).(.{3}).(.{3})(.{12}).*$/, '$1-$2-4$3-8$4-$5');
      const token = (): string => hex().slice(0, 24);
      for (const name of fs.readdirSync(dir).filter((file) => file.endsWith('.jsonl'))) {
        const committed = fs.readFileSync(path.join(dir, name), 'utf8');
        const rerun = committed
          .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, uuid)
          .replace(/\b(msg|req)_[0-9a-f]{24}\b/g, (_id, prefix: string) => `${prefix}_${token()}`)
          .replace(
            /"(duration_ms|duration_api_ms|ttft_ms|ttft_stream_ms|time_to_request_ms|first_content_frame_ms)":\d+/g,
            '"$1":7',
          )
          .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, new Date(0).toISOString())
          .replace(/capture-pc-cwd-[A-Za-z0-9]+/g, 'capture-pc-cwd-Other1')
          .replace(/cc-socks\/\d+\.sock/g, 'cc-socks/1.sock');
        expect(diffFacts(name, streamJsonFacts(committed), streamJsonFacts(rerun))).toEqual([]);
      }
    });

    it('shows a line that is not JSON', () => {
      expect(diffFacts('text.jsonl', streamJsonFacts(text), streamJsonFacts(`${text}Update available!\n`))).toEqual([
        { where: 'text.jsonl', change: 'added', key: 'line', fresh: ['not JSON'] },
      ]);
    });
  });
});
