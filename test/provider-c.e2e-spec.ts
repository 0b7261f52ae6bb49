import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ChatStreamResult } from './support/chat-sse';
import {
  contents,
  finishReason,
  postChat,
  postChatBody,
  readRest,
  readUntil,
  reasonings,
  sseChunks,
  streamChat,
  toolFrames,
} from './support/chat-sse';
import type { ChildGateway } from './support/child-gateway';
import { ConnectProxy } from './support/connect-proxy';
import { spawnGateway } from './support/child-gateway';
import type { TestGateway } from './support/create-test-app';
import { startGateway } from './support/create-test-app';
import type { FakeReply, FakeStreamReply } from './support/fake-anthropic-api';
import { API_ERRORS, FakeAnthropicApi, textReply, thinkingOnlyReply } from './support/fake-anthropic-api';
import { eventually } from './support/poll';
import { isAlive, waitFor } from './support/provider-c-fixtures';
import { KeepAliveSweep } from '../src/common/sse/keep-alive-sweep';
import { formatWait } from '../src/core/error-codes';
import {
  REAL_CLAUDE_PATH,
  REAL_CLAUDE_VERSION,
  realClaudeEnvironment,
  realClaudeGatewaySettings,
} from './support/real-claude';

/**
 * provider_c end to end with the REAL Claude Code binary (2.1.332, the pinned oracle): the
 * gateway spawns it for every turn, and it talks to a loopback fake of the Anthropic Messages API
 * that streams the real SSE events and sends the real error bodies and headers. Each test puts a
 * unique marker into its prompt and scripts the fake's replies for that marker, so one gateway
 * and one fake serve the whole file, tests running concurrently (each spawn costs ~0.5 s of CPU and
 * ~0.7 s of wall time). (What the real binary cannot be made to do — die by a
 * signal, print garbage, never exit — is in provider-c-cli-failures.e2e-spec.ts with the fake CLI.)
 */

const TICKS = '```';
const fenceText = (name: string, args: unknown) =>
  `${TICKS}agent_tool_call\n${JSON.stringify({ name, arguments: args })}\n${TICKS}`;
const READ_FILE = {
  type: 'function',
  function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
};
const LS = { type: 'function', function: { name: 'ls', parameters: { type: 'object', properties: {} } } };
/** read_file with `strict: true`: its calls are held to the schema by the gateway (docs/chat.md "Strict tools"). */
const STRICT_READ_FILE = {
  type: 'function',
  function: {
    name: 'read_file',
    strict: true,
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  },
};
const APPLY_PATCH = { type: 'custom', custom: { name: 'apply_patch', description: 'Apply a patch' } };

/** What the CLI writes as its own error messages; none of it may ever reach a client. */
const CLI_ERROR_TEXT =
  /Not logged in|Please run \/login|API Error|Failed to authenticate|hit your|limit ·|Overloaded|Internal server error|malformed|inference gateway/;

let api: FakeAnthropicApi;
let gateway: TestGateway;
let home: string;

beforeAll(async () => {
  api = await FakeAnthropicApi.start();
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'provider-c-real-home-'));
  gateway = await startGateway(realClaudeGatewaySettings(api.baseUrl, home));
  // No keep-alive round on a timer: a held answer's head goes out only with a comment a round
  // writes, so a refusal of tool_choice is the 422 of its test however slow the machine is.
  gateway.app.get(KeepAliveSweep, { strict: false }).sweepOnlyWhenCalled();
});

afterAll(async () => {
  await gateway?.close();
  await api?.close();
  fs.rmSync(home, { recursive: true, force: true });
});

/** A fresh conversation whose prompt carries a unique marker the fake API answers with `replies`. */
function scripted(replies: FakeReply[]): { marker: string; messages: { role: string; content: string }[] } {
  const marker = `scenario-${randomUUID()}`;
  api.scriptFor(marker, replies);
  return { marker, messages: [{ role: 'user', content: `Test ${marker}` }] };
}

const stream = (blocks: FakeStreamReply['blocks'], extra: Partial<FakeStreamReply> = {}): FakeStreamReply => ({
  type: 'stream',
  blocks,
  ...extra,
});

/** Nothing the CLI wrote about an error is in what the client got, in any field. */
function expectNoCliText(result: ChatStreamResult | string): void {
  expect(typeof result === 'string' ? result : result.raw).not.toMatch(CLI_ERROR_TEXT);
}

describe('provider_c with the real Claude Code CLI', () => {
  describe('answers', () => {
    it.concurrent(
      'docs/upstream/provider-c.md §11.9 streams Hel and lo as separate content chunks as the API sends them',
      async () => {
        // 'lo' leaves the fake API 3 s after 'Hel'. A gateway that held 'Hel' back would deliver both
        // together; a busy machine delays 'Hel' by a few hundred ms, far below the half-gap bound.
        const { messages } = scripted([stream([{ kind: 'text', deltas: ['Hel', 'lo'] }], { deltaDelayMs: 3000 })]);
        const result = await streamChat(gateway, { messages });
        expect(result.status).toBe(200);
        expect(contents(result)).toEqual(['Hel', 'lo']);
        const at = (text: string) => result.events.find((event) => event.data.includes(`"content":"${text}"`))!.at;
        expect(at('lo') - at('Hel')).toBeGreaterThanOrEqual(1500);
        expect(result.chunks[0].choices[0].delta).toEqual({ role: 'assistant' });
        expect(finishReason(result)).toBe('stop');
        expect(result.done).toBe(true);
      },
    );

    it.concurrent('refuses an image or audio part with a 400 naming it, without starting claude', async () => {
      const marker = `scenario-${randomUUID()}`;
      for (const [part, named, fix] of [
        [
          { type: 'image_url', image_url: { url: 'https://example.test/cat.png' } },
          'part type "image_url"',
          'describe the image in a text part, or choose a model of a family that takes images (provider_a, provider_b)',
        ],
        [
          { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
          'part type "input_audio"',
          'send its transcript as a text part (no family takes audio)',
        ],
      ] as const) {
        const messages = [{ role: 'user', content: [{ type: 'text', text: `Look ${marker}` }, part] }];
        const response = await postChat(gateway, { messages });
        expect(response.status).toBe(400);
        const body = (await response.json()) as any;
        expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request', param: 'messages' });
        expect(body.error.message).toBe(
          `messages[0].content[1]: ${named} is not supported by provider_c (Claude Code takes the conversation as text); ${fix}`,
        );
      }
      expect(JSON.stringify(api.messages())).not.toContain(marker);
    });

    it.concurrent(
      'sends every listed model with the max_tokens GET /v1/models lists and no long-context beta: its 1M window is native',
      async () => {
        const listed = (
          (await (await fetch(`${gateway.url}/v1/models`)).json()) as {
            data: Array<{ id: string; owned_by: string; max_output_tokens?: number; reasoning_effort?: string }>;
          }
        ).data.filter(
          (entry) => entry.owned_by === 'provider_c' && !entry.id.startsWith('api/') && !entry.reasoning_effort,
        );
        expect(listed.map((entry) => entry.id)).toEqual(
          expect.arrayContaining(['sonnet', 'claude-haiku-4-5-20251001']),
        );
        const sent = await Promise.all(
          listed.map(async ({ id }) => {
            const { marker, messages } = scripted([textReply('ok')]);
            expect((await postChat(gateway, { model: id, messages })).status).toBe(200);
            const [request] = api.messages(marker);
            return { id, max_tokens: request.body.max_tokens, context_1m_beta: /context-1m/.test(request.beta ?? '') };
          }),
        );
        expect(sent).toEqual(
          listed.map(({ id, max_output_tokens }) => ({ id, max_tokens: max_output_tokens, context_1m_beta: false })),
        );
      },
    );

    it.concurrent(
      'docs/upstream/provider-c.md §11.2 every reasoning_effort reaches claude-haiku-4-5-20251001, which has no effort levels, as a thinking budget; a model with effort levels keeps its effort',
      async () => {
        /** The thinking and effort the CLI asked the API for on one request. */
        const sentFor = async (model: string, reasoning_effort: string) => {
          const { marker, messages } = scripted([textReply('ok')]);
          expect((await postChat(gateway, { model, messages, reasoning_effort })).status).toBe(200);
          const [request] = api.messages(marker);
          return { thinking: request.body.thinking, output_config: request.body.output_config };
        };
        const budget = (budget_tokens: number) => ({
          thinking: { type: 'enabled', budget_tokens, display: 'updates' },
          output_config: undefined,
        });
        const haiku = 'claude-haiku-4-5-20251001';
        expect(
          await Promise.all(['low', 'medium', 'high', 'xhigh', 'max'].map((effort) => sentFor(haiku, effort))),
        ).toEqual([budget(4000), budget(10000), budget(31999), budget(31999), budget(31999)]);
        // The budget is no part of an adaptive model's request: its effort is.
        expect(await sentFor('claude-opus-4-8', 'low')).toEqual({
          thinking: { type: 'adaptive', display: 'updates' },
          output_config: { effort: 'low' },
        });
      },
    );

    it.concurrent('a non-streamed request gets the whole answer and the usage the CLI reports', async () => {
      const { messages } = scripted([
        textReply(['Hel', 'lo'], { input_tokens: 3, cache_read_input_tokens: 2, output_tokens: 2 }),
      ]);
      const response = await postChat(gateway, { messages });
      expect(response.status).toBe(200);
      const body = (await response.json()) as any;
      expect(body.choices[0].message).toMatchObject({ role: 'assistant', content: 'Hello' });
      expect(body.choices[0].finish_reason).toBe('stop');
      expect(body.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 });
    });

    it.concurrent(
      'docs/upstream/provider-c.md §11.22 usage 3 in / 2 cache read / 2 out → prompt 5, completion 2, total 7 on the usage chunk',
      async () => {
        const { messages } = scripted([
          textReply('x', { input_tokens: 3, cache_read_input_tokens: 2, output_tokens: 2 }),
        ]);
        const result = await streamChat(gateway, { messages, stream_options: { include_usage: true } });
        const usageChunk = result.chunks.find((chunk) => chunk.usage);
        expect(usageChunk!.usage).toMatchObject({
          prompt_tokens: 5,
          completion_tokens: 2,
          total_tokens: 7,
          prompt_tokens_details: { cached_tokens: 2 },
        });
      },
    );

    it.concurrent(
      'docs/upstream/provider-c.md §11.10 thinking comes out as reasoning_content, streamed and non-streamed',
      async () => {
        const { messages } = scripted([
          stream([
            { kind: 'thinking', deltas: ['Pon', 'dering'] },
            { kind: 'text', deltas: ['Answer'] },
          ]),
        ]);
        const result = await streamChat(gateway, { messages });
        expect(reasonings(result)).toEqual(['Pon', 'dering']);
        expect(contents(result)).toEqual(['Answer']);
        const body = (await (await postChat(gateway, { messages })).json()) as any;
        expect(body.choices[0].message).toMatchObject({ content: 'Answer', reasoning_content: 'Pondering' });
      },
    );
  });

  describe('the agent_tool_call bridge', () => {
    it.concurrent(
      'docs/upstream/provider-c.md §11.11 a fence split across three deltas yields one complete tool_calls frame and no fence text anywhere',
      async () => {
        const fence = fenceText('read_file', { path: 'a' });
        const { messages } = scripted([
          textReply(['Checking.\n' + fence.slice(0, 7), fence.slice(7, 30), fence.slice(30)]),
        ]);
        const result = await streamChat(gateway, { messages, tools: [READ_FILE] });
        const frames = toolFrames(result);
        expect(frames).toHaveLength(1);
        expect(frames[0]).toMatchObject({
          index: 0,
          type: 'function',
          function: { name: 'read_file', arguments: '{"path":"a"}' },
        });
        expect(frames[0].id).toMatch(/^call_[0-9a-f]{24}$/);
        for (const text of [...contents(result), ...reasonings(result)]) {
          expect(text).not.toContain('`');
          expect(text).not.toContain('agent_tool_call');
        }
        expect(contents(result).join('')).toBe('Checking.\n');
        expect(finishReason(result)).toBe('tool_calls');
        expect(result.done).toBe(true);
      },
    );

    it.concurrent(
      'the continuation carries the call and the tool result to the API as prompt text, each once',
      async () => {
        const { marker, messages } = scripted([textReply('The package is demo-app.')]);
        const history = [
          ...messages,
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'call_abc',
                type: 'function',
                function: { name: 'read_file', arguments: '{"path":"package.json"}' },
              },
            ],
          },
          { role: 'tool', tool_call_id: 'call_abc', content: 'TOOL-OUTPUT-7f3' },
        ];
        const result = await streamChat(gateway, { messages: history, tools: [READ_FILE] });
        expect(contents(result).join('')).toBe('The package is demo-app.');
        const [request] = api.messages(marker);
        const sent = JSON.stringify(request.body);
        expect(sent).toContain(
          JSON.stringify(
            `Assistant:\n${fenceText('read_file', { path: 'package.json' })}\n\nTool result (read_file):\nTOOL-OUTPUT-7f3`,
          ).slice(1, -1),
        );
        expect(sent.split('TOOL-OUTPUT-7f3')).toHaveLength(2);
        expect(sent).not.toContain('call_abc');
      },
    );

    it.concurrent(
      'results sent in another order than the calls reach the model right after them in call order; an unanswered call reads as cancelled, a stray result is left out',
      async () => {
        const { marker, messages } = scripted([textReply('a.ts holds A.')]);
        const call = (id: string, name: string, args: unknown) => ({
          id,
          type: 'function',
          function: { name, arguments: JSON.stringify(args) },
        });
        const history = [
          ...messages,
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              call('call_1', 'read_file', { path: 'a.ts' }),
              call('call_2', 'read_file', { path: 'b.ts' }),
              call('call_3', 'run', { cmd: 'touch x' }),
            ],
          },
          { role: 'tool', tool_call_id: 'call_2', content: 'CONTENT-OF-B' },
          { role: 'tool', tool_call_id: 'call_gone', content: 'STRAY-RESULT' },
          { role: 'tool', tool_call_id: 'call_1', content: 'CONTENT-OF-A' },
          { role: 'user', content: 'What is in a.ts?' },
        ];
        const run = { type: 'function', function: { name: 'run', parameters: { type: 'object' } } };
        const result = await streamChat(gateway, { messages: history, tools: [READ_FILE, run] });
        expect(contents(result).join('')).toBe('a.ts holds A.');
        const [request] = api.messages(marker);
        const sent = JSON.stringify(request.body);
        const calls = [
          fenceText('read_file', { path: 'a.ts' }),
          fenceText('read_file', { path: 'b.ts' }),
          fenceText('run', { cmd: 'touch x' }),
        ].join('\n');
        expect(sent).toContain(
          JSON.stringify(
            `Assistant:\n${calls}\n\n` +
              'Tool result (read_file):\nCONTENT-OF-A\n\n' +
              'Tool result (read_file):\nCONTENT-OF-B\n\n' +
              'Tool result (run):\nThe tool call was cancelled before it returned a result.\n\n' +
              'User:\nWhat is in a.ts?',
          ).slice(1, -1),
        );
        expect(sent).not.toContain('STRAY-RESULT');
      },
    );

    describe('results the client sent away from their calls still answer them (docs/upstream/provider-c.md §4)', () => {
      const call = (id: string, name: string, args: unknown) => ({
        id,
        type: 'function',
        function: { name, arguments: JSON.stringify(args) },
      });
      const LIST = { type: 'function', function: { name: 'list', parameters: { type: 'object' } } };
      /** The prompt the CLI sent the API for `history` (its tools read_file and list). */
      const promptFor = async (history: unknown[]): Promise<string> => {
        const { marker, messages } = scripted([textReply('Done.')]);
        const result = await streamChat(gateway, { messages: [...messages, ...history], tools: [READ_FILE, LIST] });
        expect(contents(result).join('')).toBe('Done.');
        return api.messages(marker)[0].body.messages[0].content;
      };

      it.concurrent('results sent after two call turns each follow their own call', async () => {
        const sent = await promptFor([
          { role: 'assistant', content: null, tool_calls: [call('call_a', 'read_file', { path: 'a' })] },
          { role: 'assistant', content: null, tool_calls: [call('call_b', 'list', {})] },
          { role: 'tool', tool_call_id: 'call_a', content: 'R-A' },
          { role: 'tool', tool_call_id: 'call_b', content: 'R-B' },
        ]);
        expect(sent).toContain(
          `Assistant:\n${fenceText('read_file', { path: 'a' })}\n\nTool result (read_file):\nR-A\n\n` +
            `Assistant:\n${fenceText('list', {})}\n\nTool result (list):\nR-B\n\n`,
        );
        expect(sent).not.toContain('cancelled before it returned');
      });

      it.concurrent('a result sent after a user message answers its call, before that message', async () => {
        const sent = await promptFor([
          {
            role: 'assistant',
            content: null,
            tool_calls: [call('call_a', 'read_file', { path: 'a' }), call('call_b', 'list', {})],
          },
          { role: 'tool', tool_call_id: 'call_a', content: 'R-A' },
          { role: 'user', content: 'list is slow' },
          { role: 'tool', tool_call_id: 'call_b', content: 'R-B' },
        ]);
        expect(sent).toContain('Tool result (read_file):\nR-A\n\nTool result (list):\nR-B\n\nUser:\nlist is slow');
        expect(sent).not.toContain('cancelled before it returned');
      });

      it.concurrent(
        'when two turns reuse one call id, each result follows and is named after its own call',
        async () => {
          const sent = await promptFor([
            { role: 'assistant', content: null, tool_calls: [call('call_0', 'read_file', { path: 'a' })] },
            { role: 'tool', tool_call_id: 'call_0', content: 'R-A' },
            { role: 'assistant', content: null, tool_calls: [call('call_0', 'list', {})] },
            { role: 'tool', tool_call_id: 'call_0', content: 'R-B' },
          ]);
          expect(sent).toContain(
            `Assistant:\n${fenceText('read_file', { path: 'a' })}\n\nTool result (read_file):\nR-A\n\n` +
              `Assistant:\n${fenceText('list', {})}\n\nTool result (list):\nR-B\n\n`,
          );
        },
      );
    });

    it.concurrent('an empty tool result reaches the model as "(no output)", answering its call', async () => {
      const { marker, messages } = scripted([textReply('x was created.')]);
      const history = [
        ...messages,
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_t', type: 'function', function: { name: 'run', arguments: '{"cmd":"touch x"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_t', content: '' },
      ];
      const run = { type: 'function', function: { name: 'run', parameters: { type: 'object' } } };
      const body = (await (await postChat(gateway, { messages: history, tools: [run] })).json()) as any;
      expect(body.choices[0].message.content).toBe('x was created.');
      const sent = JSON.stringify(api.messages(marker)[0].body);
      expect(sent).toContain(
        JSON.stringify(
          `Assistant:\n${fenceText('run', { cmd: 'touch x' })}\n\nTool result (run):\n(no output)\n\n(Continue`,
        ).slice(1, -1),
      );
      expect(sent).not.toContain('cancelled before it returned');
    });

    it.concurrent(
      'docs/upstream/provider-c.md §11.12 "here " streams at once while only the partial opener is held',
      async () => {
        const { messages } = scripted([
          stream(
            [
              {
                kind: 'text',
                deltas: [`here ${TICKS}agent_to`, 'ol_call\n{"name":"ls","arguments":{}}', `\n${TICKS}\ndone`],
              },
            ],
            { deltaDelayMs: 1500 },
          ),
        ]);
        const result = await streamChat(gateway, { messages, tools: [LS] });
        const here = result.events.find((event) => event.data.includes('"content":"here "'))!;
        const done = result.events.find((event) => event.data.includes('"content":"\\ndone"'))!;
        // Two 1.5 s gaps separate them at the API; "here " held back would arrive with "\ndone".
        expect(done.at - here.at).toBeGreaterThanOrEqual(1500);
        expect(contents(result)).toEqual(['here ', '\ndone']);
        expect(toolFrames(result).map((frame) => frame.function.name)).toEqual(['ls']);
      },
    );

    it.concurrent(
      'docs/upstream/provider-c.md §11.13 an ordinary python code fence is shown unchanged; §11.21 unfenced JSON is text',
      async () => {
        const python = scripted([textReply(['see ', `${TICKS}python\nprint(1)\n`, TICKS])]);
        const shown = await streamChat(gateway, { messages: python.messages, tools: [LS] });
        expect(contents(shown).join('')).toBe(`see ${TICKS}python\nprint(1)\n${TICKS}`);
        expect(toolFrames(shown)).toEqual([]);
        const json = scripted([textReply('{"name":"ls","arguments":{}}\n')]);
        const plain = await streamChat(gateway, { messages: json.messages, tools: [LS] });
        expect(contents(plain).join('')).toBe('{"name":"ls","arguments":{}}\n');
        expect(toolFrames(plain)).toEqual([]);
      },
    );

    it.concurrent(
      'docs/upstream/provider-c.md §11.14 arguments containing triple backticks are parsed whole and text after the fence continues',
      async () => {
        const code = `${TICKS}js\nx()\n${TICKS}`;
        const { messages } = scripted([textReply([fenceText('write', { text: code }), '\nAfter the fence.'])]);
        const result = await streamChat(gateway, {
          messages,
          tools: [{ type: 'function', function: { name: 'write' } }],
        });
        expect(JSON.parse(toolFrames(result)[0].function.arguments)).toEqual({ text: code });
        expect(contents(result).join('')).toBe('\nAfter the fence.');
      },
    );

    it.concurrent(
      'docs/upstream/provider-c.md §11.15/§11.16 a fence in thinking is a call, not reasoning; drafted in thinking and written in text it is one call',
      async () => {
        const { messages } = scripted([
          stream([
            { kind: 'thinking', deltas: [`Let me read.\n${fenceText('read_file', { path: 'x' })}`] },
            { kind: 'text', deltas: [fenceText('read_file', { path: 'x' })] },
          ]),
        ]);
        const result = await streamChat(gateway, { messages, tools: [READ_FILE] });
        expect(reasonings(result).join('')).toBe('Let me read.\n');
        expect(toolFrames(result)).toHaveLength(1);
      },
    );

    it.concurrent(
      'docs/upstream/provider-c.md §11.17 two fences → frames 0 and 1 with different call_ ids and finish tool_calls',
      async () => {
        const { messages } = scripted([textReply(fenceText('read_file', { path: 'a' }) + '\n' + fenceText('ls', {}))]);
        const result = await streamChat(gateway, { messages, tools: [READ_FILE, LS] });
        const frames = toolFrames(result);
        expect(frames.map((frame) => frame.index)).toEqual([0, 1]);
        expect(frames.map((frame) => frame.function.name)).toEqual(['read_file', 'ls']);
        expect(frames[0].id).not.toBe(frames[1].id);
        expect(finishReason(result)).toBe('tool_calls');
        // The newline between the blocks is no answer: no content delta (no empty bubble).
        expect(result.chunks.filter((chunk) => chunk.choices?.[0]?.delta?.content !== undefined)).toEqual([]);
      },
    );

    it.concurrent('only tool calls, non-streamed: content is null, not the whitespace between the blocks', async () => {
      const { messages } = scripted([
        textReply(['\n', fenceText('read_file', { path: 'a' }), '\n', fenceText('ls', {}), '\n']),
      ]);
      const body = (await (await postChat(gateway, { messages, tools: [READ_FILE, LS] })).json()) as any;
      expect(body.choices[0].message.content).toBeNull();
      expect(body.choices[0].message.tool_calls.map((call: any) => call.function.name)).toEqual(['read_file', 'ls']);
      expect(body.choices[0].finish_reason).toBe('tool_calls');
    });

    it.concurrent(
      'docs/upstream/provider-c.md §11.18 a custom tool block is a function-typed call with the raw patch as arguments',
      async () => {
        const patch = '*** Begin Patch\n*** Update File: a.txt\n-x\n+y\n*** End Patch';
        const { messages } = scripted([
          textReply('```agent_tool_call\n' + JSON.stringify({ name: 'apply_patch', arguments: patch }) + '\n```'),
        ]);
        const frames = toolFrames(await streamChat(gateway, { messages, tools: [APPLY_PATCH] }));
        expect(frames).toEqual([
          { index: 0, id: expect.any(String), type: 'function', function: { name: 'apply_patch', arguments: patch } },
        ]);
      },
    );

    it.concurrent(
      'docs/upstream/provider-c.md §11.19/§11.20 a truncated fence is never shown; a broken one alone ends in the invalid-tool-call chunk and [DONE]',
      async () => {
        const truncated = scripted([textReply(['Working. ', '```agent_tool_call\n{"name":"ls","argu'])]);
        const cut = await streamChat(gateway, { messages: truncated.messages, tools: [LS] });
        expect(contents(cut)[0]).toBe('Working. ');
        expect(contents(cut).join('')).not.toContain('agent_tool_call');
        expect(gateway.logs.recordsOf(cut.headers, 'tool_fence_unclosed')).toEqual([
          expect.objectContaining({ accepted: false }),
        ]);
        const unclosed = scripted([textReply('```agent_tool_call\n{"name":"ls","arguments":{}}\n')]);
        const accepted = await streamChat(gateway, { messages: unclosed.messages, tools: [LS] });
        expect(toolFrames(accepted).map((frame) => frame.function.name)).toEqual(['ls']);
        expect(gateway.logs.recordsOf(accepted.headers, 'tool_fence_unclosed')).toEqual([
          expect.objectContaining({ accepted: true }),
        ]);
        const broken = scripted([textReply('```agent_tool_call\n{"name":"ls","arguments":{,}}\n```')]);
        const result = await streamChat(gateway, { messages: broken.messages, tools: [LS] });
        expect(result.status).toBe(200);
        expect(contents(result)).toEqual(['[error: invalid upstream tool call]']);
        expect(toolFrames(result)).toEqual([]);
        expect(result.done).toBe(true);
        // Held for a tool_choice the gateway enforces, the same answer ends the stream the same way.
        const held = scripted([textReply('```agent_tool_call\n{"name":"ls","arguments":{,}}\n```')]);
        const heldResult = await streamChat(gateway, { messages: held.messages, tools: [LS], tool_choice: 'required' });
        expect(heldResult.status).toBe(200);
        expect(contents(heldResult)).toEqual(['[error: invalid upstream tool call]']);
        expect(finishReason(heldResult)).toBe('stop');
        expect(heldResult.done).toBe(true);
      },
    );

    it.concurrent(
      'a valid block beside a broken one, or a function call whose arguments are not an object, ends in the invalid-tool-call error: no call, no tool_calls finish',
      async () => {
        const broken = '```agent_tool_call\n{"name":"ls","arguments":{,}}\n```';
        for (const reply of [
          `${fenceText('ls', {})}\n${broken}`,
          `${fenceText('ls', {})}\n${fenceText('read_file', [1, 2])}`,
        ]) {
          const streamedScript = scripted([textReply(reply)]);
          const streamed = await streamChat(gateway, { messages: streamedScript.messages, tools: [LS, READ_FILE] });
          expect(streamed.status).toBe(200);
          expect(contents(streamed)).toEqual(['[error: invalid upstream tool call]']);
          expect(toolFrames(streamed)).toEqual([]);
          expect(finishReason(streamed)).toBe('stop');
          expect(streamed.done).toBe(true);
          // The request's one warning is its own line; the block's line is info.
          await gateway.logs.failureLine(streamed.headers.get('x-request-id')!, 50, {
            status: 200,
            error_code: 'invalid_tool_call',
          });
          const wholeScript = scripted([textReply(reply)]);
          const whole = await postChat(gateway, { messages: wholeScript.messages, tools: [LS, READ_FILE] });
          expect(whole.status).toBe(502);
          expect(((await whole.json()) as any).error.code).toBe('invalid_tool_call');
        }
      },
    );

    it.concurrent(
      'a strict tool is held to its schema by the gateway: an answer with a call it refuses is asked again while nothing of it was written, the third one ends in the invalid-tool-call error, one it accepts goes out, and a schema it cannot compile is a 400 before the CLI runs (docs/chat.md "Strict tools")',
      async () => {
        const refusedScript = scripted([textReply(fenceText('read_file', { file: 'secret.ts' }))]);
        const refused = await streamChat(gateway, { messages: refusedScript.messages, tools: [STRICT_READ_FILE] });
        expect(refused.status).toBe(200);
        expect(contents(refused)).toEqual(['[error: invalid upstream tool call]']);
        expect(toolFrames(refused)).toEqual([]);
        expect(gateway.logs.recordsOf(refused.headers, 'tool_call_invalid')).toEqual([
          expect.objectContaining({ index: 0, reason: 'off_schema_arguments' }),
        ]);
        // Nothing of it was written before the call: asked again twice, then the third one fails.
        expect(api.messages(refusedScript.marker)).toHaveLength(3);
        expect(gateway.logs.recordsOf(refused.headers, 'chat_strict_call_refused')).toHaveLength(2);
        const retriedScript = scripted([
          textReply(fenceText('read_file', { file: 'a.ts' })),
          textReply(fenceText('read_file', { path: 'a.ts' })),
        ]);
        const retried = await streamChat(gateway, { messages: retriedScript.messages, tools: [STRICT_READ_FILE] });
        expect(toolFrames(retried).map((frame) => frame.function.arguments)).toEqual(['{"path":"a.ts"}']);
        expect(api.messages(retriedScript.marker)).toHaveLength(2);
        // Not streamed: the answer is asked again twice, then the third one's call fails it.
        const wholeScript = scripted([textReply(fenceText('read_file', { path: 9 }))]);
        const whole = await postChat(gateway, { messages: wholeScript.messages, tools: [STRICT_READ_FILE] });
        expect(whole.status).toBe(502);
        const error = ((await whole.json()) as any).error;
        expect(error.message).toContain(
          `the tool call at index 0 ("read_file") has arguments that its strict tool's parameters schema refuses`,
        );
        expect(api.messages(wholeScript.marker)).toHaveLength(3);
        expect(gateway.logs.recordsOf(whole.headers, 'chat_strict_call_refused')).toHaveLength(2);
        const againScript = scripted([
          textReply(fenceText('read_file', { path: 9 })),
          textReply(fenceText('read_file', { path: 'b.ts' })),
        ]);
        const again = await postChat(gateway, { messages: againScript.messages, tools: [STRICT_READ_FILE] });
        expect(again.status).toBe(200);
        expect(((await again.json()) as any).choices[0].message.tool_calls.map((call: any) => call.function)).toEqual([
          { name: 'read_file', arguments: '{"path":"b.ts"}' },
        ]);
        expect(api.messages(againScript.marker)).toHaveLength(2);

        const acceptedScript = scripted([textReply(fenceText('read_file', { path: 'a.ts' }))]);
        const accepted = await streamChat(gateway, { messages: acceptedScript.messages, tools: [STRICT_READ_FILE] });
        expect(toolFrames(accepted).map((frame) => frame.function.arguments)).toEqual(['{"path":"a.ts"}']);
        expect(finishReason(accepted)).toBe('tool_calls');

        const unusedScript = scripted([textReply('never sent')]);
        const broken = { type: 'function', function: { name: 'ls', strict: true, parameters: { type: 'nope' } } };
        const badSchema = await postChat(gateway, { messages: unusedScript.messages, tools: [broken] });
        expect(badSchema.status).toBe(400);
        expect(((await badSchema.json()) as any).error).toMatchObject({ code: 'invalid_request', param: 'tools' });
        expect(api.messages(unusedScript.marker)).toEqual([]);
      },
    );

    it.concurrent(
      'an empty block, or one whose object has neither name nor arguments, beside a valid one is dropped: the valid call alone at index 0, finish tool_calls, streamed and not',
      async () => {
        for (const empty of ['```agent_tool_call\n\n```', '```agent_tool_call\n{}\n```']) {
          const reply = `${empty}\n${fenceText('ls', {})}`;
          const streamedScript = scripted([textReply(reply)]);
          const streamed = await streamChat(gateway, { messages: streamedScript.messages, tools: [LS] });
          expect(streamed.status).toBe(200);
          expect(toolFrames(streamed)).toEqual([
            { index: 0, id: expect.any(String), type: 'function', function: { name: 'ls', arguments: '{}' } },
          ]);
          expect(finishReason(streamed)).toBe('tool_calls');
          expect(streamed.done).toBe(true);
          expect(gateway.logs.recordsOf(streamed.headers, 'tool_call_empty')).toEqual([
            expect.objectContaining({ level: 30, provider: 'provider_c', index: 0 }),
          ]);
          const wholeScript = scripted([textReply(reply)]);
          const whole = await postChat(gateway, { messages: wholeScript.messages, tools: [LS] });
          expect(whole.status).toBe(200);
          const choice = ((await whole.json()) as any).choices[0];
          expect(choice.finish_reason).toBe('tool_calls');
          expect(choice.message.tool_calls.map((call: any) => call.function.name)).toEqual(['ls']);
        }
      },
    );

    it.concurrent(
      'tool_choice none: no protocol in the prompt, and a block the model writes anyway is dropped, never text or a call',
      async () => {
        const reply = () =>
          textReply(['Listing. ', fenceText('ls', {}).slice(0, 20), fenceText('ls', {}).slice(20), ' Done.']);
        const { marker, messages } = scripted([reply(), reply()]);
        const body = { messages, tools: [LS], tool_choice: 'none' };
        const streamed = await streamChat(gateway, body);
        expect(contents(streamed).join('')).toBe('Listing.  Done.');
        expect(toolFrames(streamed)).toEqual([]);
        expect(finishReason(streamed)).toBe('stop');
        expect(streamed.raw).not.toContain('agent_tool_call');
        expect(gateway.logs.recordsOf(streamed.headers, 'tool_fence_discarded')).toEqual([
          expect.objectContaining({ channel: 'content' }),
        ]);
        const response = await postChat(gateway, body);
        const whole = (await response.json()) as any;
        expect(whole.choices[0].message.content).toBe('Listing.  Done.');
        expect(whole.choices[0].message.tool_calls).toBeUndefined();
        expect(whole.choices[0].finish_reason).toBe('stop');
        const prompts = api.messages(marker).map((request) => JSON.stringify(request.body));
        expect(prompts).toHaveLength(2);
        for (const prompt of prompts) {
          expect(prompt).not.toContain('## Tools');
          expect(prompt).not.toContain('agent_tool_call');
        }
      },
    );

    it.concurrent(
      'tool_choice required: an answer without a call is asked again; the client gets the answer with the call, nothing of the first',
      async () => {
        const { marker, messages } = scripted([
          textReply('The file probably says hello.'),
          textReply(['Reading it.\n', fenceText('read_file', { path: 'a.txt' })]),
        ]);
        const result = await streamChat(gateway, { messages, tools: [READ_FILE, LS], tool_choice: 'required' });
        expect(result.status).toBe(200);
        expect(contents(result).join('')).toBe('Reading it.\n');
        expect(result.raw).not.toContain('probably');
        expect(toolFrames(result).map((frame) => frame.function)).toEqual([
          { name: 'read_file', arguments: '{"path":"a.txt"}' },
        ]);
        expect(finishReason(result)).toBe('tool_calls');
        expect(result.done).toBe(true);
        const prompts = api.messages(marker).map((request) => JSON.stringify(request.body));
        expect(prompts).toHaveLength(2);
        // The model is still told, each time; the gateway holds the answer to it.
        for (const prompt of prompts)
          expect(prompt).toContain('This reply must contain at least one agent_tool_call block.');
        expect(gateway.logs.recordsOf(result.headers, 'chat_tool_choice_unmet')).toEqual([
          expect.objectContaining({ attempt: 1 }),
        ]);
      },
    );

    it.concurrent(
      'a forced tool: a call of another tool never reaches the client, and an answer calling only another tool is asked again',
      async () => {
        const { marker, messages } = scripted([
          textReply(fenceText('ls', {})),
          textReply([fenceText('ls', {}), '\n', fenceText('read_file', { path: 'a.txt' })]),
        ]);
        const response = await postChat(gateway, {
          messages,
          tools: [READ_FILE, LS],
          tool_choice: { type: 'function', function: { name: 'read_file' } },
        });
        expect(response.status).toBe(200);
        const body = (await response.json()) as any;
        expect(body.choices[0].message.tool_calls).toEqual([
          {
            id: expect.stringMatching(/^call_/),
            type: 'function',
            function: { name: 'read_file', arguments: '{"path":"a.txt"}' },
          },
        ]);
        expect(body.choices[0].finish_reason).toBe('tool_calls');
        expect(api.messages(marker)).toHaveLength(2);
        expect(gateway.logs.recordsOf(response.headers, 'tool_call_unchosen')).toHaveLength(2);
      },
    );

    it.concurrent(
      'tool names are exact: " read_file " beside read_file is a tool of its own, listed, forced and called back under its name; a call that drops its spaces still comes back under it',
      async () => {
        const spaced = ' read_file ';
        const SPACED = { type: 'function', function: { ...READ_FILE.function, name: spaced } };
        const forced = scripted([
          textReply([fenceText(spaced, { path: 'a.txt' }), '\n', fenceText('read_file', { path: 'b.txt' })]),
        ]);
        const response = await postChat(gateway, {
          messages: forced.messages,
          tools: [READ_FILE, SPACED],
          tool_choice: { type: 'function', function: { name: spaced } },
        });
        expect(response.status).toBe(200);
        const body = (await response.json()) as any;
        // The call of read_file is another tool's: tool_choice leaves it out.
        expect(body.choices[0].message.tool_calls.map((call: any) => call.function)).toEqual([
          { name: spaced, arguments: '{"path":"a.txt"}' },
        ]);
        expect(gateway.logs.recordsOf(response.headers, 'tool_call_unchosen')).toHaveLength(1);
        const prompt = JSON.stringify(api.messages(forced.marker)[0].body);
        expect(prompt).toContain(JSON.stringify('{"name":" read_file ","type":"function"').slice(1, -1));
        expect(prompt).toContain(JSON.stringify('This reply must call the tool " read_file ".').slice(1, -1));

        const dropped = scripted([textReply(fenceText('read_file', { path: 'c.txt' }))]);
        const answer = await postChat(gateway, { messages: dropped.messages, tools: [SPACED, LS] });
        expect(answer.status).toBe(200);
        expect(((await answer.json()) as any).choices[0].message.tool_calls.map((call: any) => call.function)).toEqual([
          { name: spaced, arguments: '{"path":"c.txt"}' },
        ]);
      },
    );

    it.concurrent(
      'a forced strict tool: a call its schema refuses is asked again, not failed, also after the call that met the choice; three such answers are 422 saying why (docs/chat.md "Strict tools")',
      async () => {
        const forced = { type: 'function', function: { name: 'read_file' } };
        const again = scripted([
          textReply(fenceText('read_file', { file: 'a.txt' })),
          textReply(fenceText('read_file', { path: 'a.txt' })),
        ]);
        const response = await postChat(gateway, {
          messages: again.messages,
          tools: [STRICT_READ_FILE],
          tool_choice: forced,
        });
        expect(response.status).toBe(200);
        const body = (await response.json()) as any;
        expect(body.choices[0].message.tool_calls.map((call: any) => call.function)).toEqual([
          { name: 'read_file', arguments: '{"path":"a.txt"}' },
        ]);
        expect(api.messages(again.marker)).toHaveLength(2);
        expect(gateway.logs.recordsOf(response.headers, 'chat_tool_choice_unmet')).toEqual([
          expect.objectContaining({ attempt: 1 }),
        ]);

        const never = scripted([textReply(fenceText('read_file', { file: 'a.txt' }))]);
        const refused = await streamChat(gateway, {
          messages: never.messages,
          tools: [STRICT_READ_FILE],
          tool_choice: forced,
        });
        expect(refused.status).toBe(422);
        expect(refused.body.error).toMatchObject({
          code: 'output_validation_failed',
          param: 'tool_choice',
          message: expect.stringContaining(
            'the model\'s calls of the tool "read_file" that tool_choice forces had arguments its strict parameters schema refuses in 3 attempts',
          ),
        });
        expect(api.messages(never.marker)).toHaveLength(3);

        // A refused call after the one that met the choice: the whole answer is held, so it is asked again.
        const second = scripted([
          textReply([fenceText('read_file', { path: 'a.txt' }), fenceText('read_file', { file: 'b.txt' })]),
          textReply([fenceText('read_file', { path: 'a.txt' }), fenceText('read_file', { path: 'b.txt' })]),
        ]);
        const streamed = await streamChat(gateway, {
          messages: second.messages,
          tools: [STRICT_READ_FILE],
          tool_choice: 'required',
        });
        expect(streamed.status).toBe(200);
        expect(toolFrames(streamed).map((frame) => frame.function.arguments)).toEqual([
          '{"path":"a.txt"}',
          '{"path":"b.txt"}',
        ]);
        expect(api.messages(second.marker)).toHaveLength(2);
        expect(gateway.logs.recordsOf(streamed.headers, 'chat_strict_call_refused')).toEqual([
          expect.objectContaining({ attempt: 1 }),
        ]);
      },
    );

    it.concurrent(
      'three answers without the forced call are 422 output_validation_failed naming tool_choice and the tool, nothing streamed',
      async () => {
        const { marker, messages } = scripted([textReply(['No tool is needed: ', fenceText('ls', {})])]);
        const result = await streamChat(gateway, {
          messages,
          tools: [READ_FILE, LS],
          tool_choice: { type: 'function', function: { name: 'read_file' } },
        });
        expect(result.status).toBe(422);
        expect(result.body).toEqual({
          error: {
            message:
              'the model did not call the tool "read_file" that tool_choice forces in 3 attempts; send the request again, or send tool_choice "auto" to take the model\'s answer as it comes',
            type: 'upstream_error',
            code: 'output_validation_failed',
            param: 'tool_choice',
          },
        });
        expect(api.messages(marker)).toHaveLength(3);
      },
    );

    it.concurrent('a non-streamed request runs the same bridge and aggregates content and tool calls', async () => {
      const { messages } = scripted([textReply(['Looking.\n', fenceText('ls', {})])]);
      const body = (await (await postChat(gateway, { messages, tools: [LS] })).json()) as any;
      expect(body.choices[0].message.content).toBe('Looking.\n');
      expect(body.choices[0].message.tool_calls).toEqual([
        { id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'ls', arguments: '{}' } },
      ]);
      expect(body.choices[0].finish_reason).toBe('tool_calls');
    });
  });

  describe('an answer held for tool_choice keeps its connection alive', () => {
    // A gateway of its own whose keep-alive rounds run only when a test runs them: a round reaches
    // no other test's stream, and no test waits 7.5 s for one.
    let held: TestGateway;
    let sweep: KeepAliveSweep;
    beforeAll(async () => {
      held = await startGateway(realClaudeGatewaySettings(api.baseUrl, home));
      sweep = held.app.get(KeepAliveSweep, { strict: false });
      sweep.sweepOnlyWhenCalled();
    });
    afterAll(() => held?.close());

    /** A promise the test settles: the fake API holds the end of an answer until then. */
    function gate(): { readonly promise: Promise<void>; open(): void } {
      let open!: () => void;
      const promise = new Promise<void>((resolve) => (open = resolve));
      return { promise, open };
    }

    /**
     * Sends a streamed tool_choice request and waits until the gateway holds its answer (its stream
     * joined the keep-alive sweep: the upstream accepted the first attempt); then runs two rounds:
     * the first finds the stream just joined, the second finds it silent for a whole round.
     */
    async function heldAnswer(messages: unknown[]): Promise<Response> {
      const sent = postChat(held, { stream: true, messages, tools: [READ_FILE, LS], tool_choice: 'required' });
      await eventually(() => sweep.size === 1, 30_000, 'the held answer in the keep-alive sweep');
      sweep.sweep();
      sweep.sweep();
      return sent;
    }

    it('a comment per silent round while the answer is held, across attempts, then exactly the answer with the call', async () => {
      const first = gate();
      const second = gate();
      const { marker, messages } = scripted([
        { ...textReply('The file probably says hello.'), holdUntil: first.promise },
        { ...textReply('It says hello, I would guess.'), holdUntil: second.promise },
        textReply(['Reading it.\n', fenceText('read_file', { path: 'a.txt' })]),
      ]);
      const response = await heldAnswer(messages);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
      const reader = response.body!.getReader();
      // The head went out with the comment of the silent round, and nothing of the answer.
      expect(await readUntil(reader, '\n\n')).toBe(': keep-alive\n\n');
      first.open();
      await eventually(() => api.messages(marker).length === 2, 30_000, 'the second attempt at the API');
      expect(sweep.size).toBe(1);
      sweep.sweep();
      expect(await readUntil(reader, '\n\n')).toBe(': keep-alive\n\n');
      second.open();
      const rest = await readRest(reader);
      const answer = { ...sseChunks(rest), raw: rest } as unknown as ChatStreamResult;
      expect(answer.chunks[0].choices[0].delta).toEqual({ role: 'assistant' });
      expect(contents(answer).join('')).toBe('Reading it.\n');
      expect(toolFrames(answer)).toEqual([
        {
          index: 0,
          id: expect.stringMatching(/^call_/),
          type: 'function',
          function: { name: 'read_file', arguments: '{"path":"a.txt"}' },
        },
      ]);
      expect(finishReason(answer)).toBe('tool_calls');
      expect(answer.done).toBe(true);
      expect(rest).not.toMatch(/probably|guess|keep-alive/);
      expect(api.messages(marker)).toHaveLength(3);
      await eventually(() => sweep.size === 0, 30_000, 'the ended stream out of the keep-alive sweep');
    });

    it('a refusal after the head went out is the error chunk and [DONE] of an open stream, not a 422', async () => {
      const first = gate();
      const { marker, messages } = scripted([
        { ...textReply('No tool is needed.'), holdUntil: first.promise },
        textReply('No tool is needed.'),
      ]);
      const response = await heldAnswer(messages);
      expect(response.status).toBe(200);
      const reader = response.body!.getReader();
      expect(await readUntil(reader, '\n\n')).toBe(': keep-alive\n\n');
      first.open();
      const { chunks, data, done } = sseChunks(await readRest(reader));
      expect(data).toHaveLength(3);
      expect(chunks.map((chunk) => chunk.choices[0])).toEqual([
        { index: 0, delta: { role: 'assistant' }, finish_reason: null },
        { index: 0, delta: { content: '[error: output validation failed]' }, finish_reason: 'stop' },
      ]);
      expect(done).toBe(true);
      expect(api.messages(marker)).toHaveLength(3);
      const requestId = response.headers.get('x-request-id');
      expect(held.logs.records('chat_completion').filter((record) => record.reqId === requestId)).toEqual([
        expect.objectContaining({ status: 200, error_code: 'output_validation_failed' }),
      ]);
      await eventually(() => sweep.size === 0, 30_000, 'the ended stream out of the keep-alive sweep');
    });
  });

  describe('failures: errors are errors, never the model answer', () => {
    it.concurrent(
      'an upstream 401 on a stream is HTTP 403 upstream_login_required naming the fix, before any SSE byte, and on a plain request too',
      async () => {
        const { marker, messages } = scripted([API_ERRORS.unauthorized()]);
        const result = await streamChat(gateway, { messages });
        expect(result.status).toBe(403);
        expect(result.headers.get('content-type')).toContain('application/json');
        expect(result.body.error).toMatchObject({
          type: 'permission_error',
          code: 'upstream_login_required',
          message: expect.stringContaining('`/login`'),
        });
        expectNoCliText(result);
        const plain = await postChat(gateway, { messages });
        expect(plain.status).toBe(403);
        expectNoCliText(await plain.text());
        // The CLI itself calls twice on a 401 even with its retries off; the gateway never retries auth.
        expect(api.messages(marker)).toHaveLength(4);
      },
    );

    it.concurrent(
      'a spent usage credit ("Credit balance is too low") is HTTP 429 insufficient_quota naming the credit; the CLI\'s words are on the log line only',
      async () => {
        const { marker, messages } = scripted([API_ERRORS.creditTooLow()]);
        const requestId = `credit-${randomUUID()}`;
        const result = await streamChat(gateway, { messages }, { 'x-request-id': requestId });
        expect(result.status).toBe(429);
        expect(result.headers.get('x-request-id')).toBe(requestId);
        // No reset reported: the wait is the pool's rest of the gateway's only login, the default
        // cooldown (5 min), or longer while a limit of another test of this file rests it.
        const retryAfter = Number(result.headers.get('retry-after'));
        expect(retryAfter).toBeGreaterThanOrEqual(299);
        expect(retryAfter).toBeLessThanOrEqual(3600);
        expect(result.headers.get('x-should-retry')).toBe('false');
        expect(result.body.error).toEqual({
          type: 'insufficient_quota',
          code: 'insufficient_quota',
          param: null,
          message: expect.stringContaining('the usage credit of this Claude Code CLI login is used up'),
        });
        expect(result.body.error.message).toContain(`; retry in ${formatWait(retryAfter)}, add usage credits`);
        expect(JSON.stringify(result.body)).not.toContain('Credit balance');
        expect(api.messages(marker)).toHaveLength(1);
        expect(gateway.logs.recordsOf(result.headers, 'chat_completion')).toEqual([
          expect.objectContaining({ reqId: requestId, status: 429, error_code: 'usage_credit_exhausted' }),
        ]);
        // The cause, in the CLI's words, on the turn's upstream_* line under the same request id.
        expect(gateway.logs.recordsOf(result.headers, 'upstream_turn_failed')).toEqual([
          expect.objectContaining({
            reqId: requestId,
            provider: 'provider_c',
            error_code: 'usage_credit_exhausted',
            upstream_status: 400,
            upstream_message: 'Credit balance is too low',
          }),
        ]);
      },
    );

    it.concurrent(
      "the API's version gate (claude_code_version_too_old) is HTTP 400 model_requires_newer_client naming `claude update` and the installed version, streamed or not, never retried",
      async () => {
        // The fake API serves this model only to Claude Code 2.1.400 or newer, judged by the CLI's user agent.
        api.requireClientVersion('2.1.400', 'claude-version-gated-5');
        const { marker, messages } = scripted([textReply('never sent')]);
        const requestId = `gate-${randomUUID()}`;
        const body = { model: 'provider_c/claude-version-gated-5', messages };
        const result = await streamChat(gateway, body, { 'x-request-id': requestId });
        expect(result.status).toBe(400);
        expect(result.headers.get('content-type')).toContain('application/json');
        expect(result.body.error).toEqual({
          type: 'invalid_request_error',
          code: 'model_requires_newer_client',
          param: null,
          message: expect.stringContaining(
            `installed on the gateway (version ${REAL_CLAUDE_VERSION}) as too old for this model or for the account's organization; run \`claude update\``,
          ),
        });
        expectNoCliText(result);
        expect(JSON.stringify(result.body)).not.toContain('2.1.400');
        const plain = await postChat(gateway, body);
        expect(plain.status).toBe(400);
        const plainBody = await plain.text();
        expect(plainBody).toContain('`claude update`');
        expectNoCliText(plainBody);
        // The CLI itself asks twice with its retries off; the gateway runs it once per request.
        expect(api.messages(marker)).toHaveLength(4);
        expect(gateway.logs.recordsOf(result.headers, 'upstream_retry')).toEqual([]);
        expect(gateway.logs.recordsOf(result.headers, 'upstream_turn_failed')).toEqual([
          expect.objectContaining({
            reqId: requestId,
            error_code: 'model_requires_newer_client',
            upstream_status: 400,
            upstream_code: 'claude_code_version_too_old',
            // The operator's line keeps the API's words, the version it requires included; the
            // command the API quotes goes like any quoted span.
            upstream_message: expect.stringContaining('or newer is required. Run [quoted], or update'),
          }),
        ]);
      },
    );

    it.concurrent(
      'a subscription limit is HTTP 429 rate_limit_error with Retry-After from the reset the API reported, streamed or not',
      async () => {
        const reset = Math.floor(Date.now() / 1000) + 3600;
        const { marker, messages } = scripted([API_ERRORS.limit(reset)]);
        const result = await streamChat(gateway, { messages });
        expect(result.status).toBe(429);
        expect(result.body.error).toMatchObject({ type: 'rate_limit_error', code: 'usage_limit_reached' });
        const retryAfter = Number(result.headers.get('retry-after'));
        expect(retryAfter).toBeGreaterThan(3500);
        expect(retryAfter).toBeLessThanOrEqual(3600);
        expectNoCliText(result);
        const plain = await postChat(gateway, { messages });
        expect(plain.status).toBe(429);
        expect(Number(plain.headers.get('retry-after'))).toBeGreaterThan(3500);
        expect(api.messages(marker)).toHaveLength(2);
      },
    );

    it.concurrent('a rate limit without a reset is HTTP 429 with Retry-After 60, after one run', async () => {
      const { marker, messages } = scripted([
        {
          type: 'error',
          status: 429,
          errorType: 'rate_limit_error',
          message: 'Number of request tokens has exceeded your per-minute rate limit',
        },
      ]);
      const result = await streamChat(gateway, { messages });
      expect(result.status).toBe(429);
      expect(result.headers.get('retry-after')).toBe('60');
      expect(result.body.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
      expectNoCliText(result);
      expect(api.messages(marker)).toHaveLength(1);
    });

    it.concurrent('529 overloaded on every run: three runs, then HTTP 502 before any SSE byte', async () => {
      const { marker, messages } = scripted([API_ERRORS.overloaded()]);
      const result = await streamChat(gateway, { messages });
      expect(result.status).toBe(502);
      expect(result.body.error).toMatchObject({ type: 'upstream_error' });
      expectNoCliText(result);
      expect(api.messages(marker)).toHaveLength(3);
    });

    it.concurrent('a 500 and then an answer: the retry is invisible and the client gets the answer', async () => {
      const { marker, messages } = scripted([API_ERRORS.internal(), textReply('recovered')]);
      const result = await streamChat(gateway, { messages });
      expect(result.status).toBe(200);
      expect(contents(result)).toEqual(['recovered']);
      expectNoCliText(result);
      expect(api.messages(marker)).toHaveLength(2);
    });

    it.concurrent(
      'a failure after output: the text so far, the error chunk and [DONE]; never retried; the CLI message is not content',
      async () => {
        const { marker, messages } = scripted([
          stream([{ kind: 'text', deltas: ['Half an ', 'answer'] }], {
            failMidway: { errorType: 'overloaded_error', message: 'Overloaded' },
          }),
        ]);
        const result = await streamChat(gateway, { messages });
        expect(result.status).toBe(200);
        expect(contents(result)).toEqual(['Half an ', 'answer', '[error: upstream error]']);
        expect(result.done).toBe(true);
        expectNoCliText(result);
        // The CLI re-sent the request once itself (a stream that broke mid-answer); the gateway repeated no run.
        expect(gateway.logs.recordsOf(result.headers, 'provider_c_process_start')).toHaveLength(1);
        expect(api.messages(marker).length).toBeLessThanOrEqual(2);
        const plain = await postChat(gateway, { messages });
        expect(plain.status).toBe(502);
        expectNoCliText(await plain.text());
      },
    );
  });

  describe('an answer the CLI restarts after the API stream broke (docs/upstream/provider-c.md §6.1)', () => {
    const broken = (deltas: string[]) =>
      stream([{ kind: 'text', deltas }], { failMidway: { errorType: 'overloaded_error', message: 'Overloaded' } });

    it.concurrent(
      'text already sent and a different new answer: the text, the error chunk and [DONE], never the two joined; a non-streamed request gets the new answer',
      async () => {
        const { marker, messages } = scripted([broken(['Half an ', 'answer']), textReply('Full new answer')]);
        const result = await streamChat(gateway, { messages });
        expect(result.status).toBe(200);
        expect(contents(result)).toEqual(['Half an ', 'answer', '[error: upstream error]']);
        expect(result.done).toBe(true);
        // The CLI asked twice (the broken stream, then without streaming); the gateway ran one child.
        expect(api.messages(marker).map((request) => request.body.stream === true)).toEqual([true, false]);
        expect(gateway.logs.recordsOf(result.headers, 'provider_c_process_start')).toHaveLength(1);
        expect(gateway.logs.recordsOf(result.headers, 'provider_c_answer_restarted')).toHaveLength(1);
        expect(gateway.logs.recordsOf(result.headers, 'upstream_attempt_failed')).toEqual([
          expect.objectContaining({ error_code: 'upstream', detail: expect.stringContaining('does not continue') }),
        ]);
        const again = scripted([broken(['Half an ', 'answer']), textReply('Full new answer')]);
        const plain = await postChat(gateway, { messages: again.messages });
        expect(plain.status).toBe(200);
        expect(((await plain.json()) as any).choices[0].message).toMatchObject({ content: 'Full new answer' });
      },
    );

    it.concurrent(
      'a stream broken inside a fence: the new answer repeats the text sent and its complete fence is the call',
      async () => {
        const fence = fenceText('read_file', { path: 'a' });
        const { messages } = scripted([
          broken(['Checking.\n' + fence.slice(0, 7), fence.slice(7, 32)]),
          textReply('Checking.\n' + fence),
        ]);
        const result = await streamChat(gateway, { messages, tools: [READ_FILE] });
        expect(contents(result)).toEqual(['Checking.\n']);
        expect(toolFrames(result)).toEqual([
          expect.objectContaining({ function: { name: 'read_file', arguments: '{"path":"a"}' } }),
        ]);
        expect(finishReason(result)).toBe('tool_calls');
        expect(result.done).toBe(true);
      },
    );
  });

  describe('docs/upstream/provider-c.md §11.35 an answer of thinking only, which the CLI asks again for (§6.2)', () => {
    const answered = (thinking: string[], text: string) =>
      stream([
        { kind: 'thinking', deltas: thinking },
        { kind: 'text', deltas: [text] },
      ]);

    it.concurrent(
      "streamed: the reasoning once, then the new answer's text; non-streamed: the new answer alone; one child each, two API calls",
      async () => {
        const replies = () => [thinkingOnlyReply(['hmm', ' more']), answered(['hmm', ' more'], 'Hello.')];
        const streamed = scripted(replies());
        const result = await streamChat(gateway, { messages: streamed.messages });
        expect(result.status).toBe(200);
        expect(reasonings(result)).toEqual(['hmm', ' more']);
        expect(contents(result)).toEqual(['Hello.']);
        expect(finishReason(result)).toBe('stop');
        expect(result.done).toBe(true);
        expect(api.messages(streamed.marker)).toHaveLength(2);
        expect(gateway.logs.recordsOf(result.headers, 'provider_c_process_start')).toHaveLength(1);
        expect(gateway.logs.recordsOf(result.headers, 'provider_c_answer_asked_again')).toHaveLength(1);
        const plain = scripted(replies());
        const response = await postChat(gateway, { messages: plain.messages });
        expect(response.status).toBe(200);
        expect(((await response.json()) as any).choices[0]).toMatchObject({
          message: { content: 'Hello.', reasoning_content: 'hmm more' },
          finish_reason: 'stop',
        });
        expect(api.messages(plain.marker)).toHaveLength(2);
        expect(gateway.logs.recordsOf(response.headers, 'provider_c_process_start')).toHaveLength(1);
      },
    );

    it.concurrent(
      'a new answer that thinks otherwise: streamed, its reasoning whole after what was sent, then its text; non-streamed, only the new answer',
      async () => {
        const replies = () => [thinkingOnlyReply(['hmm', ' more']), answered(['hmm', ' less'], 'Hello.')];
        const streamed = scripted(replies());
        const result = await streamChat(gateway, { messages: streamed.messages });
        expect(reasonings(result)).toEqual(['hmm', ' more', 'hmm less']);
        expect(contents(result)).toEqual(['Hello.']);
        expect(finishReason(result)).toBe('stop');
        expect(result.done).toBe(true);
        const plain = scripted(replies());
        const body = (await (await postChat(gateway, { messages: plain.messages })).json()) as any;
        expect(body.choices[0].message).toMatchObject({ content: 'Hello.', reasoning_content: 'hmm less' });
      },
    );

    it.concurrent(
      'the new answer is thinking only too: the reasoning once and no text, finish stop, streamed and not; the CLI asks no third time',
      async () => {
        const streamed = scripted([thinkingOnlyReply(['hmm', ' more'])]);
        const result = await streamChat(gateway, { messages: streamed.messages });
        expect(result.status).toBe(200);
        expect(reasonings(result)).toEqual(['hmm', ' more']);
        expect(contents(result)).toEqual([]);
        expect(finishReason(result)).toBe('stop');
        expect(result.done).toBe(true);
        expect(api.messages(streamed.marker)).toHaveLength(2);
        const plain = scripted([thinkingOnlyReply(['hmm', ' more'])]);
        const body = (await (await postChat(gateway, { messages: plain.messages })).json()) as any;
        expect(body.choices[0].message.reasoning_content).toBe('hmm more');
        expect(body.choices[0].message.content ?? '').toBe('');
        expect(body.choices[0].finish_reason).toBe('stop');
        expect(api.messages(plain.marker)).toHaveLength(2);
      },
    );

    it.concurrent(
      "a call drafted in the thinking of the answer asked again is no call of its own: the new answer's call, once",
      async () => {
        const fence = fenceText('read_file', { path: 'a' });
        for (const streamedRequest of [true, false]) {
          const { messages } = scripted([
            thinkingOnlyReply(['Plan: ', fence]),
            answered(['Plan.'], `Reading.\n${fence}`),
          ]);
          const response = await postChat(gateway, { messages, tools: [READ_FILE], stream: streamedRequest });
          const raw = await response.text();
          const calls = streamedRequest
            ? toolFrames({ ...sseChunks(raw), raw } as unknown as ChatStreamResult)
            : JSON.parse(raw).choices[0].message.tool_calls;
          expect(calls).toEqual([
            expect.objectContaining({ function: { name: 'read_file', arguments: '{"path":"a"}' } }),
          ]);
        }
      },
    );
  });

  describe('docs/upstream/provider-c.md §11.34 a refusal (stop_reason "refusal": the safety classifier stopped the answer)', () => {
    const refused = (deltas: string[]) =>
      stream([{ kind: 'text', deltas }], { stopReason: 'refusal', usage: { input_tokens: 9, output_tokens: 4 } });

    /** The request's one summary line: a refusal is the model's answer, logged at info. */
    function expectRefusalLine(headers: Headers, stream: boolean): void {
      const lines = gateway.logs.recordsOf(headers, 'chat_completion');
      expect(lines).toEqual([
        expect.objectContaining({ level: 30, stream, status: 200, finish_reason: 'content_filter' }),
      ]);
      expect(lines[0].error_code).toBeUndefined();
    }

    it.concurrent(
      'streamed: the refused text once, then finish_reason content_filter and [DONE]; one API call, the CLI does not ask again',
      async () => {
        const { marker, messages } = scripted([refused(['I will ', 'not.']), textReply('Another answer.')]);
        const result = await streamChat(gateway, { messages, stream_options: { include_usage: true } });
        expect(result.status).toBe(200);
        expect(
          result.chunks.map((chunk) => [chunk.choices[0]?.delta ?? null, chunk.choices[0]?.finish_reason ?? null]),
        ).toEqual([
          [{ role: 'assistant' }, null],
          [{ content: 'I will ' }, null],
          [{ content: 'not.' }, null],
          [{}, 'content_filter'],
          [null, null],
        ]);
        expect(result.chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 });
        expect(result.done).toBe(true);
        expectNoCliText(result);
        expect(api.messages(marker)).toHaveLength(1);
        expectRefusalLine(result.headers, true);
      },
    );

    it.concurrent(
      'non-streamed: 200 with the refused text and finish_reason content_filter, not a 400; one API call',
      async () => {
        const { marker, messages } = scripted([refused(['I will ', 'not.']), textReply('Another answer.')]);
        const response = await postChat(gateway, { messages });
        expect(response.status).toBe(200);
        const raw = await response.text();
        expectNoCliText(raw);
        const body = JSON.parse(raw);
        expect(body.choices[0]).toMatchObject({
          message: { role: 'assistant', content: 'I will not.' },
          finish_reason: 'content_filter',
        });
        expect(body.usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 });
        expect(api.messages(marker)).toHaveLength(1);
        expectRefusalLine(response.headers, false);
      },
    );

    it.concurrent(
      'a tool-call block in the refused answer is no call: the text before it and content_filter, streamed and not',
      async () => {
        const fence = fenceText('read_file', { path: 'a' });
        const replies = () => [refused(['Checking.\n', fence]), textReply('Another answer.')];
        const streamed = scripted(replies());
        const result = await streamChat(gateway, { messages: streamed.messages, tools: [READ_FILE] });
        expect(contents(result)).toEqual(['Checking.\n']);
        expect(toolFrames(result)).toEqual([]);
        expect(finishReason(result)).toBe('content_filter');
        expect(result.done).toBe(true);
        expect(api.messages(streamed.marker)).toHaveLength(1);
        const plain = scripted(replies());
        const body = (await (await postChat(gateway, { messages: plain.messages, tools: [READ_FILE] })).json()) as any;
        expect(body.choices[0].message.tool_calls).toBeUndefined();
        expect(body.choices[0]).toMatchObject({ message: { content: 'Checking.\n' }, finish_reason: 'content_filter' });
        expect(api.messages(plain.marker)).toHaveLength(1);
      },
    );

    it.concurrent(
      'an answer the gateway holds for tool_choice or response_format: the refusal is the answer, never asked again nor a 422',
      async () => {
        for (const held of [
          { tools: [READ_FILE], tool_choice: 'required' },
          { response_format: { type: 'json_object' } },
          { tools: [READ_FILE], tool_choice: 'required', response_format: { type: 'json_object' } },
        ]) {
          for (const stream of [true, false]) {
            const { marker, messages } = scripted([refused(['I will ', 'not.']), textReply('{"a":1}')]);
            const response = await postChat(gateway, { messages, stream, ...held });
            expect(response.status).toBe(200);
            const raw = await response.text();
            if (stream) {
              const answer = { ...sseChunks(raw), raw } as unknown as ChatStreamResult;
              expect(contents(answer).join('')).toBe('I will not.');
              expect(finishReason(answer)).toBe('content_filter');
              expect(answer.done).toBe(true);
            } else {
              expect(JSON.parse(raw).choices[0]).toMatchObject({
                message: { content: 'I will not.' },
                finish_reason: 'content_filter',
              });
            }
            expect(api.messages(marker)).toHaveLength(1);
            expectRefusalLine(response.headers, stream);
          }
        }
      },
    );
  });

  describe('docs/upstream/provider-c.md §8.2 an answer cut at the output limit (stop_reason "max_tokens"), which the CLI asks to resume', () => {
    const cut = (text: string, output_tokens: number) =>
      stream([{ kind: 'text', deltas: [text] }], {
        stopReason: 'max_tokens',
        usage: { input_tokens: 10, output_tokens },
      });

    it.concurrent(
      "resumed once: both messages' text, the last message's finish, and the usage of both, streamed and not; two API calls",
      async () => {
        const replies = () => [
          cut('first half, ', 900),
          stream([{ kind: 'text', deltas: ['second half.'] }], { usage: { input_tokens: 12, output_tokens: 4 } }),
        ];
        const usage = { prompt_tokens: 22, completion_tokens: 904, total_tokens: 926 };
        const streamed = scripted(replies());
        const result = await streamChat(gateway, {
          messages: streamed.messages,
          stream_options: { include_usage: true },
        });
        expect(result.status).toBe(200);
        expect(contents(result)).toEqual(['first half, ', 'second half.']);
        expect(finishReason(result)).toBe('stop');
        expect(result.chunks.at(-1)!.usage).toMatchObject(usage);
        expect(api.messages(streamed.marker)).toHaveLength(2);
        const plain = scripted(replies());
        const body = (await (await postChat(gateway, { messages: plain.messages })).json()) as any;
        expect(body.choices[0]).toMatchObject({
          message: { content: 'first half, second half.' },
          finish_reason: 'stop',
        });
        expect(body.usage).toMatchObject(usage);
        expect(api.messages(plain.marker)).toHaveLength(2);
      },
    );

    it.concurrent(
      'cut every time: the CLI gives up after three resumes, and the client gets every message, finish_reason length and their usage, never an error nor a retry',
      async () => {
        const replies = () => [
          cut('part 1. ', 9),
          cut('part 2. ', 9),
          cut('part 3. ', 9),
          cut('part 4. ', 9),
          textReply('never asked'),
        ];
        const usage = { prompt_tokens: 40, completion_tokens: 36, total_tokens: 76 };
        const streamed = scripted(replies());
        const result = await streamChat(gateway, {
          messages: streamed.messages,
          stream_options: { include_usage: true },
        });
        expect(result.status).toBe(200);
        expect(contents(result)).toEqual(['part 1. ', 'part 2. ', 'part 3. ', 'part 4. ']);
        expect(finishReason(result)).toBe('length');
        expect(result.chunks.at(-1)!.usage).toMatchObject(usage);
        expect(result.raw).not.toContain('"error"');
        expect(result.done).toBe(true);
        expectNoCliText(result);
        expect(api.messages(streamed.marker)).toHaveLength(4);
        expect(gateway.logs.recordsOf(result.headers, 'provider_c_process_start')).toHaveLength(1);
        expect(gateway.logs.recordsOf(result.headers, 'chat_completion')).toEqual([
          expect.objectContaining({ status: 200, finish_reason: 'length' }),
        ]);
        const plain = scripted(replies());
        const response = await postChat(gateway, { messages: plain.messages });
        expect(response.status).toBe(200);
        const raw = await response.text();
        expectNoCliText(raw);
        const body = JSON.parse(raw);
        expect(body.choices[0]).toMatchObject({
          message: { content: 'part 1. part 2. part 3. part 4. ' },
          finish_reason: 'length',
        });
        expect(body.usage).toMatchObject(usage);
        expect(api.messages(plain.marker)).toHaveLength(4);
        expect(gateway.logs.recordsOf(response.headers, 'provider_c_process_start')).toHaveLength(1);
      },
    );

    it.concurrent(
      'cut every time inside a tool fence: the fence is where the limit cut the answer, so the client gets the text before it and finish_reason length, never the invalid-tool-call error',
      async () => {
        const replies = () => [
          cut('part 1. ', 9),
          cut('part 2. ', 9),
          cut('part 3. ', 9),
          cut('Reading. ```agent_tool_call\n{"name":"read_file","arguments":{"pa', 9),
          textReply('never asked'),
        ];
        const streamed = scripted(replies());
        const result = await streamChat(gateway, { messages: streamed.messages, tools: [READ_FILE] });
        expect(result.status).toBe(200);
        expect(contents(result).join('')).toBe('part 1. part 2. part 3. Reading. ');
        expect(toolFrames(result)).toEqual([]);
        expect(finishReason(result)).toBe('length');
        expect(result.raw).not.toContain('"error"');
        expect(result.done).toBe(true);
        expect(gateway.logs.recordsOf(result.headers, 'tool_fence_unclosed')).toEqual([
          expect.objectContaining({ accepted: false, cut: true }),
        ]);
        expect(gateway.logs.recordsOf(result.headers, 'chat_completion')).toEqual([
          expect.objectContaining({ status: 200, finish_reason: 'length' }),
        ]);
        const plain = scripted(replies());
        const response = await postChat(gateway, { messages: plain.messages, tools: [READ_FILE] });
        expect(response.status).toBe(200);
        const body = (await response.json()) as any;
        expect(body.choices[0]).toMatchObject({
          message: { content: 'part 1. part 2. part 3. Reading. ' },
          finish_reason: 'length',
        });
        expect(body.choices[0].message.tool_calls).toBeUndefined();
      },
    );
  });

  describe('client disconnect', () => {
    it.concurrent('ends the child within 3 s and the fake API sees its connection close', async () => {
      const { marker, messages } = scripted([stream([{ kind: 'text', deltas: ['partial'] }], { hang: true })]);
      const client = new AbortController();
      const response = await postChat(gateway, { messages, stream: true }, client.signal);
      expect(response.status).toBe(200);
      await readUntil((response.body as ReadableStream<Uint8Array>).getReader(), 'partial');
      const [start] = gateway.logs.recordsOf(response.headers, 'provider_c_process_start');
      const pid = start.pid as number;
      expect(isAlive(pid)).toBe(true);
      client.abort();
      await waitFor(() => !isAlive(pid), 3000);
      await waitFor(() => api.messages(marker)[0]?.closedEarly === true, 3000);
      await waitFor(() => gateway.logs.recordsOf(response.headers, 'upstream_canceled').length > 0, 1000);
    });
  });
});

describe('provider_c with the real Claude Code CLI and PROVIDER_C_MAX_PROCESSES=1', () => {
  let slotGateway: TestGateway;
  let slotHome: string;

  beforeAll(async () => {
    slotHome = fs.mkdtempSync(path.join(os.tmpdir(), 'provider-c-slots-home-'));
    slotGateway = await startGateway({
      ...realClaudeGatewaySettings(api.baseUrl, slotHome),
      PROVIDER_C_MAX_PROCESSES: '1',
    });
  });

  afterAll(async () => {
    await slotGateway?.close();
    fs.rmSync(slotHome, { recursive: true, force: true });
  });

  /** This gateway's records of one request. */
  const slotRecordsOf = (headers: Headers, event: string) =>
    slotGateway.logs.records(event).filter((record) => record.reqId === headers.get('x-request-id'));

  it('docs/upstream/provider-c.md §2 a turn waiting for the only process slot logs queue_wait, then queue_acquire with its wait; the turn that got it at once logs no queue line', async () => {
    let endFirst!: () => void;
    const firstHeld = new Promise<void>((resolve) => (endFirst = resolve));
    const first = scripted([stream([{ kind: 'text', deltas: ['one'] }], { holdUntil: firstHeld })]);
    const second = scripted([textReply('two')]);
    const firstTurn = streamChat(slotGateway, { messages: first.messages });
    let secondTurn: ReturnType<typeof streamChat> | undefined;
    try {
      // The first child holds the only slot until its answer is let go.
      await waitFor(() => api.messages(first.marker).length > 0, 20_000);
      secondTurn = streamChat(slotGateway, { messages: second.messages });
      await slotGateway.logs.waitForLine(
        (line) => line.includes('"event":"queue_wait"') && line.includes('"provider":"provider_c_processes"'),
        20_000,
      );
      expect(api.messages(second.marker)).toEqual([]);
    } finally {
      endFirst();
    }
    const [firstResult, secondResult] = await Promise.all([firstTurn, secondTurn]);
    expect(firstResult.status).toBe(200);
    expect(contents(firstResult)).toEqual(['one']);
    expect(secondResult.status).toBe(200);
    expect(contents(secondResult)).toEqual(['two']);

    const requestId = secondResult.headers.get('x-request-id');
    expect(slotRecordsOf(secondResult.headers, 'queue_wait')).toEqual([
      expect.objectContaining({ level: 30, provider: 'provider_c_processes', request_id: requestId, position: 1 }),
    ]);
    const [acquired, ...more] = slotRecordsOf(secondResult.headers, 'queue_acquire');
    expect(more).toEqual([]);
    expect(acquired).toMatchObject({ provider: 'provider_c_processes', request_id: requestId, active: 1 });
    expect(acquired.wait_ms).toEqual(expect.any(Number));
    // One shared key: no key fields, and no line naming the prompt.
    expect(acquired).not.toHaveProperty('key_hash');
    expect(
      JSON.stringify(slotGateway.logs.records().filter((record) => String(record.event).startsWith('queue_'))),
    ).not.toContain(second.marker);
    // The hot path: a slot taken at once writes nothing.
    for (const event of ['queue_wait', 'queue_acquire', 'queue_release'])
      expect(slotRecordsOf(firstResult.headers, event)).toEqual([]);
  });
});

describe('provider_c with the real Claude Code CLI in a gateway process that exits on a second signal', () => {
  let exitHome: string;
  let child: ChildGateway | undefined;
  /** The claude child's process group and directory, removed after the test should the gateway have left them. */
  let claudeGroup: number | undefined;
  let claudeDir: string | undefined;

  beforeAll(() => {
    exitHome = fs.mkdtempSync(path.join(os.tmpdir(), 'provider-c-exit-home-'));
  });

  afterAll(async () => {
    await child?.close();
    if (claudeGroup !== undefined && groupAlive(claudeGroup)) process.kill(-claudeGroup, 'SIGKILL');
    if (claudeDir !== undefined) fs.rmSync(claudeDir, { recursive: true, force: true });
    fs.rmSync(exitHome, { recursive: true, force: true });
  });

  /** True while any process of group `pgid` exists (signal 0 only checks). */
  const groupAlive = (pgid: number) => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  };

  it('docs/upstream/provider-c.md §3.6 a second SIGTERM exits at once and still kills the claude process group and removes its directory', async () => {
    child = await spawnGateway({ ...realClaudeGatewaySettings(api.baseUrl, exitHome), GATEWAY_DRAIN_TIMEOUT: '5m' });
    const gatewayProcess = child;
    const { messages } = scripted([stream([{ kind: 'text', deltas: ['partial'] }], { hang: true })]);
    const response = await postChatBody(gatewayProcess, { model: 'claude-fable-5', messages, stream: true });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await readUntil(reader, 'partial');
    const start = gatewayProcess.records.find((record) => record.event === 'provider_c_process_start');
    const pid = start?.pid as number;
    claudeGroup = pid;
    const workDir = fs.readlinkSync(`/proc/${pid}/cwd`);
    claudeDir = workDir;
    expect(path.basename(workDir)).toMatch(/^gateway-pc-/);
    gatewayProcess.process.kill('SIGTERM');
    await waitFor(() => gatewayProcess.records.some((record) => record.event === 'drain_start'), 3000);
    gatewayProcess.process.kill('SIGTERM');
    expect(await gatewayProcess.exited).toEqual({ code: 143, signal: null });
    await waitFor(() => !groupAlive(pid), 3000);
    expect(fs.existsSync(workDir)).toBe(false);
  });
});

describe("provider_c with the real Claude Code CLI and the children's TMPDIR pointed at a scratch directory", () => {
  let tmpHome: string;
  let scratch: string;
  let tmpGateway: TestGateway;

  beforeAll(async () => {
    tmpHome = fs.mkdtempSync(path.join(os.tmpdir(), 'provider-c-tmp-home-'));
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'provider-c-tmpdir-'));
    tmpGateway = await startGateway({ ...realClaudeGatewaySettings(api.baseUrl, tmpHome), TMPDIR: scratch });
  });

  afterAll(async () => {
    await tmpGateway?.close();
    fs.rmSync(tmpHome, { recursive: true, force: true });
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('docs/upstream/provider-c.md §3.3 what the CLI writes to its temp directory goes with the working directory: nothing is left in TMPDIR', async () => {
    for (const reply of ['one', 'two']) {
      const { messages } = scripted([textReply(reply)]);
      expect(contents(await streamChat(tmpGateway, { messages }))).toEqual([reply]);
    }
    await waitFor(() => tmpGateway.logs.records('provider_c_process_exit').length === 2, 3000);
    const left = (dir: string): string[] =>
      fs
        .readdirSync(dir, { withFileTypes: true })
        .flatMap((entry) =>
          entry.isDirectory()
            ? [entry.name, ...left(path.join(dir, entry.name)).map((name) => path.join(entry.name, name))]
            : [entry.name],
        );
    expect(left(scratch)).toEqual([]);
  });
});

describe('provider_c with the real Claude Code CLI behind an egress proxy (HTTPS_PROXY)', () => {
  let proxyHome: string;
  let proxy: ConnectProxy;
  let proxyGateway: TestGateway;

  beforeAll(async () => {
    proxyHome = fs.mkdtempSync(path.join(os.tmpdir(), 'provider-c-proxy-home-'));
    proxy = await ConnectProxy.start();
    proxyGateway = await startGateway({
      ...realClaudeGatewaySettings(api.baseUrl, proxyHome),
      HTTPS_PROXY: proxy.url,
      HTTP_PROXY: proxy.url,
      ALL_PROXY: proxy.url,
      NO_PROXY: '127.0.0.1,localhost',
    });
  });

  afterAll(async () => {
    await proxyGateway?.close();
    await proxy?.close();
    fs.rmSync(proxyHome, { recursive: true, force: true });
  });

  it("docs/upstream/provider-c.md §3.2 the child talks to the API base URL only: no telemetry, error report or update check through the proxy, no telemetry file in the login's config directory", async () => {
    const { marker, messages } = scripted([textReply('hello')]);
    const result = await streamChat(proxyGateway, { messages });
    expect(contents(result)).toEqual(['hello']);
    await waitFor(() => proxyGateway.logs.records('provider_c_process_exit').length === 1, 3000);
    expect(api.messages(marker)).toHaveLength(1);
    expect(proxy.connections()).toEqual([]);
    expect(fs.existsSync(path.join(proxyHome, '.claude', 'telemetry'))).toBe(false);
  });
});

describe('provider_c with the real Claude Code CLI and PRIMARY_CUSTOM_TOOL_WIRE=custom', () => {
  let customGateway: TestGateway;
  let customHome: string;

  beforeAll(async () => {
    customHome = fs.mkdtempSync(path.join(os.tmpdir(), 'provider-c-custom-home-'));
    customGateway = await startGateway({
      GATEWAY_PROVIDERS: 'provider_c',
      PROVIDER_C_COMMAND: REAL_CLAUDE_PATH,
      PRIMARY_CUSTOM_TOOL_WIRE: 'custom',
      ...realClaudeEnvironment({ apiBaseUrl: api.baseUrl, home: customHome }),
    });
  });

  afterAll(async () => {
    await customGateway?.close();
    fs.rmSync(customHome, { recursive: true, force: true });
  });

  it('docs/upstream/provider-c.md §11.18 a custom tool block becomes a custom call with the raw patch as custom.input', async () => {
    const patch = '*** Begin Patch\n*** Update File: a.txt\n-x\n+y\n*** End Patch';
    const { messages } = scripted([
      textReply('```agent_tool_call\n' + JSON.stringify({ name: 'apply_patch', arguments: patch }) + '\n```'),
    ]);
    const frames = toolFrames(await streamChat(customGateway, { messages, tools: [APPLY_PATCH] }));
    expect(frames).toEqual([
      { index: 0, id: expect.any(String), type: 'custom', custom: { name: 'apply_patch', input: patch } },
    ]);
  });
});

describe('provider_c with the real Claude Code CLI and no login', () => {
  let noLoginApi: FakeAnthropicApi;
  let noLoginGateway: TestGateway;
  let noLoginHome: string;

  beforeAll(async () => {
    noLoginApi = await FakeAnthropicApi.start([textReply('never')]);
    noLoginHome = fs.mkdtempSync(path.join(os.tmpdir(), 'provider-c-nologin-home-'));
    noLoginGateway = await startGateway({
      GATEWAY_PROVIDERS: 'provider_c',
      PROVIDER_C_COMMAND: REAL_CLAUDE_PATH,
      ...realClaudeEnvironment({ apiBaseUrl: noLoginApi.baseUrl, home: noLoginHome, loggedIn: false }),
    });
  });

  afterAll(async () => {
    await noLoginGateway?.close();
    await noLoginApi?.close();
    fs.rmSync(noLoginHome, { recursive: true, force: true });
  });

  it('says at startup, from `claude auth status` and `claude --version`, that the login is missing, which command fixes it and which CLI version is installed', async () => {
    await noLoginGateway.logs.waitForLine((line) => line.includes('"event":"login_none_usable"'), 20_000);
    // The startup round's line (info); a later round writes one only when the state changes.
    const login = noLoginGateway.logs.records('login_state').find((record) => record.level === 30);
    expect(login).toMatchObject({
      level: 30,
      provider: 'provider_c',
      account: 'default',
      state: 'missing',
      cli_version: REAL_CLAUDE_VERSION,
      fix: expect.stringContaining('`/login`'),
    });
    expect(login?.msg).toContain(`(Claude Code CLI ${REAL_CLAUDE_VERSION})`);
    expect(login?.msg).toContain('claude setup-token');
    expect(noLoginGateway.logs.records('login_none_usable')).toContainEqual(
      expect.objectContaining({ level: 40, provider: 'provider_c', accounts: ['default'] }),
    );
  });

  it('a streamed chat is HTTP 403 upstream_login_required naming `claude` and `/login` before any SSE byte, not "Not logged in" as content; the log has the CLI\'s words', async () => {
    const result = await streamChat(noLoginGateway, {}, { 'x-request-id': 'abc-123' });
    expect(result.status).toBe(403);
    expect(result.headers.get('content-type')).toContain('application/json');
    expect(result.headers.get('x-request-id')).toBe('abc-123');
    expect(result.body.error).toMatchObject({ type: 'permission_error', code: 'upstream_login_required' });
    expect(result.body.error.message).toMatch(/provider_c .*Claude Code CLI.*`claude`.*`\/login`/);
    expectNoCliText(result);
    const plain = await postChat(noLoginGateway, {});
    expect(plain.status).toBe(403);
    expectNoCliText(await plain.text());
    expect(noLoginApi.messages()).toEqual([]);
    // The CLI's words reach only the bounded, sanitized `upstream_message` of the upstream_* lines
    // and of the request's own line, its one warning, which names the fix.
    const records = noLoginGateway.logs.records();
    expect(JSON.stringify(records.map(({ upstream_message: _words, ...rest }) => rest))).not.toMatch(CLI_ERROR_TEXT);
    await noLoginGateway.logs.failureLine('abc-123', 40, {
      status: 403,
      error_code: 'auth',
      upstream_message: 'Not logged in · Please run /login',
      fix: expect.stringContaining('`/login`'),
    });
    expect(records.find((record) => record.event === 'upstream_turn_failed')).toMatchObject({
      reqId: 'abc-123',
      provider: 'provider_c',
      error_code: 'auth',
      upstream_code: 'authentication_failed',
      upstream_message: 'Not logged in · Please run /login',
    });
  });
});

describe('provider_c with the real Claude Code CLI and other Claude credentials in the gateway environment', () => {
  let otherApi: FakeAnthropicApi;
  let otherGateway: TestGateway;
  let otherHome: string;
  /** Each would bill something other than the login: an API token, Bedrock (pointed at the fake to be seen), Foundry. */
  const credentialRoutes = (apiBaseUrl: string) => ({
    ANTHROPIC_AUTH_TOKEN: 'fake-account-api-token',
    CLAUDE_CODE_USE_BEDROCK: '1',
    AWS_BEARER_TOKEN_BEDROCK: 'fake-account-bedrock',
    ANTHROPIC_BEDROCK_BASE_URL: apiBaseUrl,
    ANTHROPIC_FOUNDRY_API_KEY: 'fake-account-foundry',
  });

  beforeAll(async () => {
    otherApi = await FakeAnthropicApi.start([textReply('from the login')]);
    otherHome = fs.mkdtempSync(path.join(os.tmpdir(), 'provider-c-routes-home-'));
    // A settings file the children never read (`--setting-sources ""`), so the login check must not either.
    fs.mkdirSync(path.join(otherHome, '.claude'));
    fs.writeFileSync(
      path.join(otherHome, '.claude', 'settings.json'),
      JSON.stringify({ apiKeyHelper: 'echo fake-account-helper', env: { CLAUDE_CODE_USE_VERTEX: '1' } }),
    );
    otherGateway = await startGateway({
      ...realClaudeGatewaySettings(otherApi.baseUrl, otherHome),
      CLAUDE_CODE_OAUTH_TOKEN: 'fake-account-login',
      ...credentialRoutes(otherApi.baseUrl),
    });
  });

  afterAll(async () => {
    await otherGateway?.close();
    await otherApi?.close();
    fs.rmSync(otherHome, { recursive: true, force: true });
  });

  it('docs/upstream/provider-c.md §11.6 the API sees only the login, the login is usable, and one startup warning names the variables without their values', async () => {
    const response = await postChat(otherGateway, {});
    expect(response.status).toBe(200);
    // Every call that carried a credential carried the login's (Bedrock's calls would reach the fake too).
    const accounts = otherApi.requests.filter((request) => request.hadCredential).map((request) => request.account);
    expect(new Set(accounts)).toEqual(new Set(['login']));
    expect(otherApi.messages()).not.toHaveLength(0);
    // `claude auth status` asked as the children run: Anthropic's API, with the login.
    await otherGateway.logs.waitForLine((line) => line.includes('"event":"login_state"'), 20_000);
    expect(otherGateway.logs.records('login_state')).toContainEqual(
      expect.objectContaining({ provider: 'provider_c', account: 'default', state: 'usable' }),
    );
    expect(otherGateway.logs.records('provider_c_credential_variables_ignored')).toEqual([
      expect.objectContaining({
        level: 40,
        variables: [
          'ANTHROPIC_AUTH_TOKEN',
          'ANTHROPIC_BEDROCK_BASE_URL',
          'ANTHROPIC_FOUNDRY_API_KEY',
          'AWS_BEARER_TOKEN_BEDROCK',
          'CLAUDE_CODE_USE_BEDROCK',
        ],
        fix: expect.stringMatching(
          /^unset ANTHROPIC_AUTH_TOKEN, .*CLAUDE_CODE_USE_BEDROCK in the gateway's environment;/,
        ),
      }),
    ]);
    expect(otherGateway.logs.text).not.toMatch(/fake-account-(api-token|bedrock|foundry)/);
  });
});
