import * as fs from 'node:fs';
import type { ChatEvent } from '../../core/chat-event';
import { GatewayError } from '../../core/gateway.error';
import { CLAUDE_CODE_PIN, claudeCapturePath } from '../../../test/support/oracle-pins';
import type { FrameStep } from '../shared/turn-runner';
import { classifyRunFailure, RunFailed } from './provider-c.errors';
import { AnswerRestarts } from './provider-c.restarts';
import type { CliRun, ProviderCStreamState, StreamStateOptions } from './provider-c.stream';
import {
  createStreamState,
  endWithoutResult,
  flushVisibleText,
  mapStopReason,
  parseStreamLine,
  toUsageEvent,
  translateLine,
} from './provider-c.stream';

const FENCE = (name: string, args: unknown) =>
  '```agent_tool_call\n' + JSON.stringify({ name, arguments: args }) + '\n```';

interface Translation {
  readonly state: ProviderCStreamState;
  /** The runner's step for each JSON line, up to the line that ended the run. */
  readonly steps: FrameStep[];
  /** The step of the line that ended the run (terminal, or a failure); none when the lines just stopped. */
  readonly end?: FrameStep;
  /**
   * Every event the steps carried, as the client keeps them (a later usage event replaces an
   * earlier one, so only the last is listed); when no line ended the run, then the end without a result.
   */
  readonly events: ChatEvent[];
  readonly nonJson: number;
  readonly diagnostics: string[];
  /** The type (and subtype or event type) of the line at which the turn counted as accepted. */
  readonly acceptedAt?: string;
}

const describeLine = (message: Record<string, any>) =>
  [message.type, message.subtype ?? message.event?.type].filter(Boolean).join('/');

/** A run that wrote nothing to stderr. */
const QUIET_RUN: CliRun = { stderr: () => '' };
/** The runner's time for the limit fixtures: 4321 s before their reset. */
const NOW = (1_900_000_000 - 4321) * 1000;

function translateLines(
  lines: readonly string[],
  options: Partial<StreamStateOptions> = {},
  run: CliRun = QUIET_RUN,
): Translation {
  const diagnostics: string[] = [];
  let counter = 0;
  const state = createStreamState({
    toolKinds: new Map(),
    diagnostic: (event, fields) =>
      diagnostics.push(`${event}${fields.accepted !== undefined ? `:${String(fields.accepted)}` : ''}`),
    newId: () => `call_${String(++counter).padStart(24, '0')}`,
    ...options,
  });
  const steps: FrameStep[] = [];
  const events: ChatEvent[] = [];
  let nonJson = 0;
  let acceptedAt: string | undefined;
  for (const line of lines) {
    const message = parseStreamLine(line);
    if (!message) {
      nonJson++;
      continue;
    }
    const step = translateLine(message, state, run);
    steps.push(step);
    if (step.accepted) acceptedAt ??= describeLine(message);
    events.push(...step.events);
    if (step.terminal || step.failure || step.unclassified)
      return { state, steps, end: step, events: lastUsageOnly(events), nonJson, diagnostics, acceptedAt };
  }
  const end = endWithoutResult(state);
  if (end.failure) return { state, steps, end, events: lastUsageOnly(events), nonJson, diagnostics, acceptedAt };
  return { state, steps, events: lastUsageOnly([...events, ...end.events]), nonJson, diagnostics, acceptedAt };
}

/** `events` without the usage events a later one replaces. */
function lastUsageOnly(events: readonly ChatEvent[]): ChatEvent[] {
  const last = events.map((event) => event.type).lastIndexOf('usage');
  return events.filter((event, index) => event.type !== 'usage' || index === last);
}

/**
 * The failure a run ended with, as the family's `classify` reads the run's `RunFailed` at the
 * runner's time (the spec fails when the run ended otherwise).
 */
function failureOf(translation: Translation): GatewayError {
  expect(translation.end).toStrictEqual({ events: [], unclassified: expect.any(RunFailed) });
  return classifyRunFailure((translation.end!.unclassified as RunFailed).failure, NOW);
}

/** Real stdout lines of the pinned Claude Code (see __fixtures__/README.md). */
const fixture = (name: string) =>
  fs
    .readFileSync(claudeCapturePath(`${name}.jsonl`), 'utf8')
    .split('\n')
    .filter((line) => line !== '');

/** The events without usage: what a test of the answer's output compares. */
const withoutUsage = (events: readonly ChatEvent[]) => events.filter((event) => event.type !== 'usage');

/** Every text the client could see: content and reasoning deltas. */
const visible = (events: ChatEvent[]) =>
  events.flatMap((event) => (event.type === 'text-delta' || event.type === 'reasoning-delta' ? [event.text] : []));
const READ_FILE_KINDS = new Map([['read_file', 'function' as const]]);
const READ_FILE_CALL = {
  type: 'tool-call',
  call: { id: 'call_000000000000000000000001', name: 'read_file', kind: 'function', arguments: '{"path":"a"}' },
};
/** The usage every captured success reports: 12 in, 6 out, no cache. */
const CAPTURED_USAGE = {
  type: 'usage',
  usage: { promptTokens: 12, completionTokens: 6, totalTokens: 18, cachedPromptTokens: 0 },
};

/** A usage event of `prompt` tokens in and `completion` out, without cache. */
const usageOf = (prompt: number, completion: number) => ({
  type: 'usage',
  usage: {
    promptTokens: prompt,
    completionTokens: completion,
    totalTokens: prompt + completion,
    cachedPromptTokens: 0,
  },
});

const line = (value: unknown) => JSON.stringify(value);
const textLine = (text: string) =>
  line({ type: 'stream_event', event: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } } });
const RESULT = line({ type: 'result', subtype: 'success', is_error: false, result: '' });

describe(translateLine.name, () => {
  it('streams the real text deltas as they come, ignores the assistant copy, reports usage, and accepts at message_start, not at system/init (docs/upstream/provider-c.md §6, §8.1)', () => {
    const result = translateLines(fixture('text'));
    const quiet = { events: [] };
    const accepted = { events: [], accepted: true };
    expect(result.steps).toStrictEqual([
      quiet, // system/ui_invalidate
      quiet, // system/init: printed before the CLI calls the API
      quiet, // system/status
      // message_start: the prompt the API read, and its first output token (provisional usage)
      { events: [usageOf(12, 1)], accepted: true },
      accepted, // content_block_start
      { events: [{ type: 'text-delta', text: 'Hel' }], accepted: true },
      { events: [{ type: 'text-delta', text: 'lo' }], accepted: true },
      accepted, // the assistant copy of what was streamed
      accepted, // content_block_stop
      { events: [usageOf(12, 6)], accepted: true }, // message_delta: the output so far
      accepted, // message_stop
      accepted, // rate_limit_event
      { events: [CAPTURED_USAGE, { type: 'finish', reason: 'stop' }], accepted: true, terminal: true },
    ]);
    expect(result.end).toBe(result.steps.at(-1));
    expect(result.acceptedAt).toBe('stream_event/message_start');
  });

  it('skips a non-JSON line between real lines and still completes', () => {
    const lines = fixture('text');
    const result = translateLines([...lines.slice(0, 3), 'garbage {', ...lines.slice(3)]);
    expect(result.nonJson).toBe(1);
    expect(result.end).toStrictEqual({
      events: [CAPTURED_USAGE, { type: 'finish', reason: 'stop' }],
      accepted: true,
      terminal: true,
    });
    expect(visible(result.events)).toEqual(['Hel', 'lo']);
  });

  it('turns real thinking deltas into reasoning and text deltas into content', () => {
    const result = translateLines(fixture('thinking'));
    expect(result.events).toEqual([
      { type: 'reasoning-delta', text: 'Pon' },
      { type: 'reasoning-delta', text: 'dering' },
      { type: 'text-delta', text: 'Answer' },
      CAPTURED_USAGE,
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('parses a fence split across three real deltas into one call with no fence text (docs/upstream/provider-c.md §7)', () => {
    const result = translateLines(fixture('tool-fence'), { toolKinds: READ_FILE_KINDS });
    expect(result.events).toEqual([
      { type: 'text-delta', text: 'Checking.\n' },
      READ_FILE_CALL,
      CAPTURED_USAGE,
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('turns fences in thinking and text into one tool call when both channels write the same call (docs/upstream/provider-c.md §7.5)', () => {
    const result = translateLines(fixture('thinking-fence'), { toolKinds: READ_FILE_KINDS });
    // A streamed message's calls come out when it ends (clients get calls only at the turn's end).
    expect(result.events).toEqual([
      { type: 'reasoning-delta', text: 'I should read it.\n' },
      { type: 'text-delta', text: 'Reading.\n' },
      READ_FILE_CALL,
      CAPTURED_USAGE,
      { type: 'finish', reason: 'stop' },
    ]);
    expect(result.diagnostics).toEqual(['tool_fence_duplicate']);
  });

  it('reads a CLI without partial messages from its assistant lines (one per content block, same message id)', () => {
    const result = translateLines(fixture('without-partial-messages'), { toolKinds: READ_FILE_KINDS });
    expect(result.acceptedAt).toBe('assistant');
    expect(result.events).toEqual([
      { type: 'reasoning-delta', text: 'Hmm.' },
      { type: 'text-delta', text: 'Hi ' },
      READ_FILE_CALL,
      CAPTURED_USAGE,
      { type: 'finish', reason: 'stop' },
    ]);
  });

  describe('real CLI failures: classified from structured fields, never shown', () => {
    /** The fixture without the CLI's words: its result text and errors, and the synthetic message's text. */
    const withoutCliText = (lines: readonly string[]) =>
      lines.map((text) => {
        const message = JSON.parse(text);
        if (message.type === 'result') return line({ ...message, result: '', errors: undefined });
        if (message.type !== 'assistant' || !Array.isArray(message.message?.content)) return text;
        const content = message.message.content.map((block: object) => ({ ...block, text: '' }));
        return line({ ...message, message: { ...message.message, content } });
      });

    it.each<[string, { code: string; status: number; retryable: boolean; retryAfter?: number }, object, string]>([
      [
        'not-logged-in',
        { code: 'auth', status: 403, retryable: false },
        { code: 'authentication_failed' },
        'Not logged in',
      ],
      [
        'unauthorized-401',
        { code: 'auth', status: 403, retryable: false },
        { type: 'authentication_error', code: 'authentication_failed' },
        'Failed to authenticate. API Error: 401',
      ],
      [
        'limit-429',
        { code: 'usage_limit', status: 429, retryable: false, retryAfter: 4321 },
        { type: 'rate_limit_error', code: 'usage_limit_reached' },
        "You've hit your 5-hour limit",
      ],
      [
        'daily-cap-paused-429',
        { code: 'usage_paused', status: 429, retryable: false, retryAfter: 3600 },
        { type: 'rate_limit_error', code: 'usage_limit_reached' },
        'Usage is paused for your organization',
      ],
      [
        'rate-limit-429-no-reset',
        { code: 'rate_limited', status: 429, retryable: false, retryAfter: 60 },
        { type: 'rate_limit_error', code: 'rate_limit' },
        'temporarily limiting requests',
      ],
      [
        'overloaded-529',
        { code: 'upstream', status: 502, retryable: true },
        { type: 'overloaded_error', code: 'server_error' },
        '529 Overloaded',
      ],
      [
        'server-error-500',
        { code: 'upstream', status: 502, retryable: true },
        { type: 'api_error', code: 'server_error' },
        '500 Internal server error',
      ],
      [
        'credit-balance-too-low',
        { code: 'usage_credit_exhausted', status: 429, retryable: false, retryAfter: 3600 },
        { type: 'invalid_request_error', code: 'billing_error' },
        'Credit balance is too low',
      ],
      [
        'long-context-429',
        { code: 'context_window', status: 400, retryable: false },
        { type: 'rate_limit_error', code: 'long_context_credits_required' },
        'Usage credits required for 1M context',
      ],
      [
        'long-context-credits-429',
        { code: 'context_window', status: 400, retryable: false },
        { type: 'rate_limit_error', code: 'long_context_credits_required' },
        'Usage credits required for 1M context',
      ],
      [
        'client-too-old-400',
        { code: 'model_requires_newer_client', status: 400, retryable: false },
        { type: 'invalid_request_error', code: 'claude_code_version_too_old' },
        'does not support this model',
      ],
    ])('%s → %o, a failure step before acceptance with no visible text', (name, expected, cause, words) => {
      const result = translateLines(fixture(name));
      expect(result.steps.slice(0, -1)).toStrictEqual(result.steps.slice(0, -1).map(() => ({ events: [] })));
      expect(result.acceptedAt).toBeUndefined();
      const error = failureOf(result);
      expect({ code: error.code, status: error.spec.status, retryable: error.retryable }).toEqual({
        code: expected.code,
        status: expected.status,
        retryable: expected.retryable,
      });
      if (expected.retryAfter !== undefined) expect(error.retryAfterHeader).toBe(expected.retryAfter);
      // The classification came from the structured fields, not from the CLI's words…
      expect(failureOf(translateLines(withoutCliText(fixture(name)))).code).toBe(error.code);
      expect(`${error.message} ${error.detail ?? ''}`).not.toMatch(
        /logged in|API Error|hit your|Invalid bearer|Credit balance/,
      );
      // …which ride along, bounded, only for the log line, beside the CLI's structured cause.
      expect(error.upstream).toEqual({ ...cause, message: expect.stringContaining(words) });
    });

    describe("the organization's usage paused at its daily cap (`dailyCapPaused`)", () => {
      const lines = () => fixture('daily-cap-paused-429').map((text) => JSON.parse(text));
      /** The fixture with `edit` applied to each parsed line (undefined drops it). */
      const edited = (edit: (message: any) => any) =>
        lines()
          .map(edit)
          .filter((message) => message !== undefined)
          .map((message) => line(message));
      const withoutParams = (message: any) => {
        const { api_error_params: _dropped, ...rest } = message;
        return rest;
      };

      it("→ usage_paused 429, never retried, resting an hour; the fix names the admin page, the CLI's words only for the log", () => {
        const error = failureOf(translateLines(fixture('daily-cap-paused-429')));
        expect(error).toMatchObject({
          code: 'usage_paused',
          retryable: false,
          provider: 'provider_c',
          upstreamStatus: 429,
          retryAfterSeconds: 3600,
          fix: expect.stringContaining('raises or lifts its daily spending cap at claude.ai/admin-settings/usage'),
        });
        expect(error.spec).toMatchObject({ status: 429, type: 'insufficient_quota', openaiCode: 'usage_paused' });
        expect(`${error.message} ${error.detail ?? ''} ${error.fix}`).not.toMatch(/Usage is paused|contact support/);
      });

      it("is told by the refused request's `rate_limit_info` alone, by the `rate_limit_event` alone, or by the words alone", () => {
        const eventOnly = edited(withoutParams);
        const paramsOnly = edited((message) => (message.type === 'rate_limit_event' ? undefined : message));
        for (const variant of [eventOnly, paramsOnly, withoutCliText(eventOnly), withoutCliText(paramsOnly)])
          expect(failureOf(translateLines(variant)).code).toBe('usage_paused');
        // A CLI that reports no marker: its words.
        const wordsOnly = edited((message) =>
          message.type === 'rate_limit_event' ? undefined : { ...withoutParams(message), api_error: undefined },
        );
        expect(failureOf(translateLines(wordsOnly)).code).toBe('usage_paused');
        // Neither marker nor words: the plan's limit the CLI's `usage_limit_reached` says.
        expect(
          failureOf(
            translateLines(
              withoutCliText(
                edited((message) => (message.type === 'rate_limit_event' ? undefined : withoutParams(message))),
              ),
            ),
          ).code,
        ).toBe('usage_limit');
      });

      it('a reset the CLI reports with it is the Retry-After and the rest', () => {
        const resetsAt = NOW / 1000 + 7200;
        const error = failureOf(
          translateLines(
            edited((message) =>
              message.type === 'rate_limit_event'
                ? { ...message, rate_limit_info: { ...message.rate_limit_info, resetsAt } }
                : message,
            ),
          ),
        );
        expect(error.code).toBe('usage_paused');
        expect(error.retryAfterSeconds).toBe(7200);
        expect(error.resetsAt).toBe(resetsAt * 1000);
      });
    });

    it("the API's version gate names `claude update` and the version the run's own init line reported", () => {
      const error = failureOf(translateLines(fixture('client-too-old-400')));
      expect(error.upstream).toMatchObject({ code: 'claude_code_version_too_old' });
      expect(error.spec).toMatchObject({ status: 400, openaiCode: 'model_requires_newer_client' });
      expect(error.publicMessage).toContain('`claude update`');
      expect(error.publicMessage).toContain(`version ${CLAUDE_CODE_PIN}`);
      expect(error.publicMessage).not.toMatch(/2\.1\.400|does not support/);
    });

    it.each([
      ['third-party-400', 'Third-party apps now draw from your extra usage'],
      ['third-party-credit-400', 'Claim it at claude.ai/settings/usage'],
      ['third-party-organization-400', 'Ask your workspace admin to claim it'],
      ['out-of-extra-usage-400', "You're out of extra usage"],
    ])(
      "%s: Anthropic's third-party refusal → extra_usage_required 403, never retried, naming extra usage and claude.ai/settings/usage; the API's words only for the log",
      (name, words) => {
        const result = translateLines(fixture(name));
        expect(result.acceptedAt).toBeUndefined();
        expect(visible(result.events)).toEqual([]);
        const error = failureOf(result);
        expect(error).toMatchObject({
          code: 'extra_usage_required',
          retryable: false,
          provider: 'provider_c',
          upstreamStatus: 400,
          upstream: { type: 'invalid_request_error', code: 'unknown', message: expect.stringContaining(words) },
        });
        expect(error.spec).toMatchObject({ status: 403, type: 'permission_error' });
        expect(`${error.message} ${error.detail ?? ''}`).not.toMatch(/Third-party|extra usage|API Error/);
        // The CLI has no structured marker for it: without its words it is any other 400.
        expect(failureOf(translateLines(withoutCliText(fixture(name)))).code).toBe('bad_request');
      },
    );

    it('a failure after output: the text so far, then a failure step; the CLI message is not content', () => {
      const result = translateLines(fixture('failed-after-output'));
      expect(result.acceptedAt).toBe('stream_event/message_start');
      expect(visible(result.events)).toEqual(['Half an ', 'answer']);
      const error = failureOf(result);
      expect(error).toMatchObject({
        code: 'upstream',
        retryable: true,
        detail: 'error result (unknown, api_error)',
        upstream: { code: 'unknown', message: expect.stringContaining('empty or malformed response') },
      });
    });

    it("classifies an error result that says nothing from the run's stderr", () => {
      const result = translateLines(
        [line({ type: 'result', subtype: 'error_during_execution', is_error: true, result: '' })],
        {},
        { stderr: () => 'warming up\nInvalid API key · Please run /login\n' },
      );
      expect(failureOf(result)).toMatchObject({
        code: 'auth',
        upstream: { message: 'Invalid API key · Please run /login' },
      });
    });
  });

  describe('an answer the CLI restarts after the API stream broke (docs/upstream/provider-c.md §6.1)', () => {
    /**
     * The delivered message's usage (its `assistant` line's: the retry was not streamed), not the
     * result line's sum of both requests (24 in, 7 out) (docs/upstream/provider-c.md §8.1).
     */
    const RESTARTED_USAGE = {
      type: 'usage',
      usage: { promptTokens: 12, completionTokens: 6, totalTokens: 18, cachedPromptTokens: 0 },
    };
    /** The rest of the sum, the broken request's: billed, for the token counters only. */
    const BROKEN_BILLED = { promptTokens: 12, completionTokens: 1, totalTokens: 13, cachedPromptTokens: 0 };
    const FINISH = { type: 'finish', reason: 'stop' };
    /** `lines` with the text of the replacement (the assistant line after the abandonment) set to `text`. */
    const withReplacement = (lines: readonly string[], text: string) => {
      const stop = lines.findIndex((text) => text.includes('"abandoned_blocks"'));
      return lines.map((entry, index) => {
        const message = JSON.parse(entry);
        if (index < stop || message.type !== 'assistant') return entry;
        return line({ ...message, message: { ...message.message, content: [{ type: 'text', text }] } });
      });
    };
    /** The real lines with the `abandoned_blocks` of their `message_stop` replaced (or removed, with undefined). */
    const withAbandoned = (lines: readonly string[], abandoned: unknown) =>
      lines.map((entry) => {
        const message = JSON.parse(entry);
        return message.event?.type === 'message_stop' ? line({ ...message, abandoned_blocks: abandoned }) : entry;
      });

    it('the real lines carry the marker: the CLI gave up the whole first response and answered again under a new id', () => {
      const lines = fixture('abandoned-text').map((entry) => JSON.parse(entry));
      const stop = lines.find((message) => message.abandoned_blocks !== undefined);
      const start = lines.find((message) => message.event?.type === 'message_start');
      expect(stop.abandoned_blocks).toEqual({ api_message_id: start.event.message.id, from_block_index: 0 });
      const replacement = lines.find((message) => message.type === 'assistant');
      expect(replacement.message.id).not.toBe(start.event.message.id);
      expect(replacement.message.content).toEqual([{ type: 'text', text: 'Full new answer' }]);
      expect(lines.at(-1)).toMatchObject({ type: 'result', subtype: 'success', result: 'Full new answer' });
    });

    it('text already sent and a new answer that does not continue it: the text, then an upstream failure, never the two joined', () => {
      {
        const result = translateLines(fixture('abandoned-text'));
        expect(visible(result.events)).toEqual(['Half an ', 'answer']);
        expect(result.end).toStrictEqual({ events: [], failure: expect.any(GatewayError) });
        expect(result.end!.failure).toMatchObject({ code: 'upstream', retryable: false });
        expect(result.end!.failure!.publicMessage).toContain('cannot be taken back');
        expect(result.end!.failure!.detail).toContain('does not continue what the client was already sent');
        expect(result.diagnostics).toEqual(['provider_c_answer_restarted']);
      }
      // What the runner releases before the error chunk holds nothing of the new answer.
      const heldBack = translateLines(withReplacement(fixture('abandoned-text'), 'Full new answer ``'));
      expect(heldBack.end!.failure).toBeDefined();
      expect(flushVisibleText(heldBack.state)).toEqual([]);
    });

    it('a new answer that continues the text sent: only the rest goes out', () => {
      const result = translateLines(withReplacement(fixture('abandoned-text'), 'Half an answer, in full'));
      expect(result.events).toEqual([
        { type: 'text-delta', text: 'Half an ' },
        { type: 'text-delta', text: 'answer' },
        { type: 'text-delta', text: ', in full' },
        RESTARTED_USAGE,
        FINISH,
      ]);
      expect(result.steps.at(-1)).toMatchObject({ terminal: true, billed: BROKEN_BILLED });
    });

    it('a new answer shorter than the text sent: an upstream failure at the result', () => {
      const result = translateLines(withReplacement(fixture('abandoned-text'), 'Half an'));
      expect(visible(result.events)).toEqual(['Half an ', 'answer']);
      expect(result.end).toStrictEqual({ events: [], failure: expect.any(GatewayError), accepted: true });
      expect(result.end!.failure!.detail).toContain('shorter than what the client was already sent');
    });

    it('a stream broken inside a fence: the open fence is dropped, and the new answer that repeats the text sent gives its call', () => {
      const result = translateLines(fixture('abandoned-tool-fence'), { toolKinds: READ_FILE_KINDS });
      expect(result.events).toEqual([
        { type: 'text-delta', text: 'Checking.\n' },
        READ_FILE_CALL,
        RESTARTED_USAGE,
        FINISH,
      ]);
      expect(result.diagnostics).toEqual(['provider_c_answer_restarted']);
    });

    it('a call of the abandoned blocks is dropped: the new answer that repeats it gives it once', () => {
      const call = FENCE('read_file', { path: 'a' });
      const lines = fixture('abandoned-tool-fence').map((entry) => {
        const message = JSON.parse(entry);
        if (message.event?.type !== 'content_block_delta') return entry;
        const text = message.event.delta.text.startsWith('Checking') ? `Checking.\n${call}\nand ` : 'th';
        return line({ ...message, event: { ...message.event, delta: { ...message.event.delta, text } } });
      });
      const result = translateLines(withReplacement(lines, `Checking.\n${call}\nand then done.`), {
        toolKinds: READ_FILE_KINDS,
      });
      expect(result.events).toEqual([
        { type: 'text-delta', text: 'Checking.\n' },
        { type: 'text-delta', text: '\nand ' },
        { type: 'text-delta', text: 'th' },
        { ...READ_FILE_CALL, call: { ...READ_FILE_CALL.call, id: 'call_000000000000000000000002' } },
        { type: 'text-delta', text: 'en done.' },
        RESTARTED_USAGE,
        FINISH,
      ]);
    });

    /** `lines` with the text deltas of the first response set to `deltas`, in order. */
    const withDeltas = (lines: readonly string[], deltas: readonly string[]) => {
      let next = 0;
      return lines.map((entry) => {
        const message = JSON.parse(entry);
        if (message.event?.type !== 'content_block_delta') return entry;
        const delta = { ...message.event.delta, text: deltas[next++] };
        return line({ ...message, event: { ...message.event, delta } });
      });
    };

    it('a new answer that writes another call than the abandoned one: only the new call goes out', () => {
      const sent = FENCE('read_file', { path: 'a' });
      const lines = withDeltas(fixture('abandoned-tool-fence'), [`Checking.\n${sent}`, '\nand ']);
      const result = translateLines(
        withReplacement(lines, `Checking.\n${FENCE('read_file', { path: 'b' })}\nand then`),
        {
          toolKinds: READ_FILE_KINDS,
        },
      );
      expect(result.events).toEqual([
        { type: 'text-delta', text: 'Checking.\n' },
        { type: 'text-delta', text: '\nand ' },
        {
          type: 'tool-call',
          call: { id: 'call_000000000000000000000002', name: 'read_file', kind: 'function', arguments: '{"path":"b"}' },
        },
        { type: 'text-delta', text: 'then' },
        RESTARTED_USAGE,
        FINISH,
      ]);
    });

    it('a fence the abandoned blocks dropped no longer counts: the new answer without one finishes normally', () => {
      const lines = withDeltas(fixture('abandoned-tool-fence'), ['```agent_tool_call\n{,}\n```', 'Done']);
      const result = translateLines(withReplacement(lines, 'Done.'), { toolKinds: READ_FILE_KINDS });
      expect(result.events).toEqual([
        { type: 'text-delta', text: 'Done' },
        { type: 'text-delta', text: '.' },
        RESTARTED_USAGE,
        FINISH,
      ]);
      expect(result.diagnostics).toEqual(['tool_fence_invalid', 'provider_c_answer_restarted']);
    });

    it("the abandoned response's stop reason is forgotten: the new answer's counts", () => {
      const lines = fixture('abandoned-text').flatMap((entry) =>
        entry.includes('"abandoned_blocks"')
          ? [
              line({ type: 'stream_event', event: { type: 'message_delta', delta: { stop_reason: 'max_tokens' } } }),
              entry,
            ]
          : [entry],
      );
      expect(translateLines(lines, { holdUntilEnd: true }).events.at(-1)).toEqual(FINISH);
    });

    it('a resumed answer after a kept thinking block: the reasoning sent stays, the text sent must be repeated', () => {
      const result = translateLines(fixture('abandoned-after-thinking'));
      expect(
        JSON.parse(fixture('abandoned-after-thinking').find((entry) => entry.includes('"abandoned_blocks"'))!),
      ).toMatchObject({ abandoned_blocks: { from_block_index: 1 } });
      expect(withoutUsage(result.events)).toEqual([
        { type: 'reasoning-delta', text: 'Pon' },
        { type: 'reasoning-delta', text: 'dering' },
        { type: 'text-delta', text: 'Half an ' },
        { type: 'text-delta', text: 'answer' },
        { type: 'reasoning-delta', text: 'Pondering again' },
      ]);
      expect(result.end).toMatchObject({ events: [], failure: { code: 'upstream' } });
    });

    it.each([
      ['abandoned-text', {}, [{ type: 'text-delta', text: 'Full new answer' }]],
      [
        'abandoned-tool-fence',
        { toolKinds: READ_FILE_KINDS },
        [{ type: 'text-delta', text: 'Checking.\n' }, READ_FILE_CALL],
      ],
      [
        'abandoned-after-thinking',
        {},
        [
          { type: 'reasoning-delta', text: 'Pon' },
          { type: 'reasoning-delta', text: 'dering' },
          { type: 'reasoning-delta', text: 'Pondering again' },
          { type: 'text-delta', text: 'Full new answer' },
        ],
      ],
    ])('a non-streaming request (%s) holds the output and takes the new answer whole', (name, options, output) => {
      const result = translateLines(fixture(name), { ...options, holdUntilEnd: true });
      // Only the usage the API reported so far goes out before the end: no model output.
      expect(result.steps.slice(0, -1).every((step) => withoutUsage(step.events).length === 0)).toBe(true);
      expect(result.events).toEqual([...output, RESTARTED_USAGE, FINISH]);
    });

    it('undoes nothing for a marker past every block streamed, or naming another response', () => {
      const expected = translateLines(fixture('text'));
      const start = fixture('text')
        .map((entry) => JSON.parse(entry))
        .find((message) => message.event?.type === 'message_start');
      for (const abandoned of [
        { api_message_id: start.event.message.id, from_block_index: 1 },
        { api_message_id: 'msg_another', from_block_index: 0 },
        { api_message_id: start.event.message.id, from_block_index: -1 },
        { api_message_id: start.event.message.id },
      ]) {
        const result = translateLines(withAbandoned(fixture('text'), abandoned));
        expect(result.events).toEqual(expected.events);
        expect(result.diagnostics).toEqual([]);
      }
    });
  });

  describe('an answer of thinking only, which the CLI asks again for (docs/upstream/provider-c.md §6.2)', () => {
    /** The second message's usage, not the result line's sum of both (24 in, 12 out). */
    const NEW_ANSWER_USAGE = CAPTURED_USAGE;
    /** The first message's: billed, for the token counters only. */
    const FIRST_BILLED = { promptTokens: 12, completionTokens: 6, totalTokens: 18, cachedPromptTokens: 0 };
    const FINISH = { type: 'finish', reason: 'stop' };

    /**
     * `lines` with the deltas of message `message` (0 the first) of `kind` replaced by `deltas`
     * (where the first of them was), and its stop reason set to `stopReason` when given.
     */
    const editMessage = (
      lines: readonly string[],
      message: number,
      edit: { readonly kind: 'thinking_delta' | 'text_delta'; readonly deltas: readonly string[] } | undefined,
      stopReason?: string,
    ) => {
      let current = -1;
      let replaced = false;
      return lines.flatMap((entry) => {
        const parsed = JSON.parse(entry);
        const event = parsed.event;
        if (event?.type === 'message_start') current++;
        if (current !== message) return [entry];
        if (event?.type === 'message_delta' && stopReason !== undefined)
          return [line({ ...parsed, event: { ...event, delta: { ...event.delta, stop_reason: stopReason } } })];
        if (!edit || event?.type !== 'content_block_delta' || event.delta.type !== edit.kind) return [entry];
        if (replaced) return [];
        replaced = true;
        const field = edit.kind === 'thinking_delta' ? 'thinking' : 'text';
        return edit.deltas.map((text) =>
          line({ ...parsed, event: { ...event, delta: { ...event.delta, [field]: text } } }),
        );
      });
    };

    it('the real lines: the first message ends without text, the CLI prints its note and streams a new message; no abandonment', () => {
      const lines = fixture('thinking-only-asked-again').map((entry) => JSON.parse(entry));
      const starts = lines.filter((message) => message.event?.type === 'message_start');
      expect(starts).toHaveLength(2);
      expect(starts[0].event.message.id).not.toBe(starts[1].event.message.id);
      expect(lines.some((message) => message.abandoned_blocks !== undefined)).toBe(false);
      expect(lines.find((message) => message.type === 'user')).toMatchObject({
        isSynthetic: true,
        message: { content: [{ type: 'text', text: expect.stringContaining('no visible output') }] },
      });
      expect(lines.at(-1)).toMatchObject({ type: 'result', subtype: 'success', num_turns: 2, result: 'Answer' });
      const twice = fixture('thinking-only-twice').map((entry) => JSON.parse(entry));
      expect(twice.filter((message) => message.event?.type === 'message_start')).toHaveLength(2);
      expect(twice.at(-1)).toMatchObject({ type: 'result', subtype: 'success', num_turns: 2, result: '' });
    });

    /** What the client gets of the streamed answer asked again, and what is billed apart. */
    const expectAskedAgain = (result: ReturnType<typeof translateLines>) => {
      expect(result.events).toEqual([
        { type: 'reasoning-delta', text: 'Pon' },
        { type: 'reasoning-delta', text: 'dering' },
        { type: 'reasoning-delta', text: ' again' },
        { type: 'text-delta', text: 'Answer' },
        NEW_ANSWER_USAGE,
        FINISH,
      ]);
      expect(result.steps.at(-1)).toMatchObject({ terminal: true, billed: FIRST_BILLED });
      expect(result.diagnostics).toEqual(['provider_c_answer_asked_again']);
    };

    it("streamed: the reasoning sent is not sent again, the new answer's goes on after it, then its text; the client gets the new message's usage, the first is billed", () => {
      expectAskedAgain(translateLines(fixture('thinking-only-asked-again')));
    });

    it('an answer stopped by a stop sequence without text is asked again the same way', () => {
      expectAskedAgain(
        translateLines(editMessage(fixture('thinking-only-asked-again'), 0, undefined, 'stop_sequence')),
      );
    });

    it("a CLI that names no message: the result's turn count alone tells the sum is two calls'; the client still gets the new message's usage", () => {
      const lines = fixture('thinking-only-asked-again').map((entry) => {
        const parsed = JSON.parse(entry);
        delete parsed.api_message_id;
        delete parsed.message?.id;
        delete parsed.event?.message?.id;
        delete parsed.begun_message_ids;
        return line(parsed);
      });
      expect(lines.join('\n')).not.toMatch(/msg_[0-9a-f]{24}/);
      const result = translateLines(lines);
      expect(visible(result.events)).toEqual(['Pon', 'dering', ' again', 'Answer']);
      expect(result.events.filter((event) => event.type === 'usage')).toEqual([NEW_ANSWER_USAGE]);
      expect(result.steps.at(-1)).toMatchObject({ terminal: true, billed: FIRST_BILLED });
    });

    it('non-streamed: only the new answer', () => {
      const result = translateLines(fixture('thinking-only-asked-again'), { holdUntilEnd: true });
      expect(result.events).toEqual([
        { type: 'reasoning-delta', text: 'Pondering again' },
        { type: 'text-delta', text: 'Answer' },
        NEW_ANSWER_USAGE,
        FINISH,
      ]);
      expect(result.steps.at(-1)).toMatchObject({ terminal: true, billed: FIRST_BILLED });
    });

    it('a new answer without text either is the answer: its reasoning once, streamed and not, and no failure', () => {
      const streamed = translateLines(fixture('thinking-only-twice'));
      expect(streamed.events).toEqual([
        { type: 'reasoning-delta', text: 'Pon' },
        { type: 'reasoning-delta', text: 'dering' },
        NEW_ANSWER_USAGE,
        FINISH,
      ]);
      const held = translateLines(fixture('thinking-only-twice'), { holdUntilEnd: true });
      expect(withoutUsage(held.events)).toEqual([
        { type: 'reasoning-delta', text: 'Pon' },
        { type: 'reasoning-delta', text: 'dering' },
        FINISH,
      ]);
    });

    it('a new answer that thinks otherwise after a repeated start: what it repeated and the rest go out whole, after what was sent', () => {
      const lines = editMessage(fixture('thinking-only-asked-again'), 1, {
        kind: 'thinking_delta',
        deltas: ['Pon', 'g, then'],
      });
      const result = translateLines(lines);
      expect(withoutUsage(result.events)).toEqual([
        { type: 'reasoning-delta', text: 'Pon' },
        { type: 'reasoning-delta', text: 'dering' },
        { type: 'reasoning-delta', text: 'Pong, then' },
        { type: 'text-delta', text: 'Answer' },
        FINISH,
      ]);
    });

    it('a new answer whose reasoning only repeats the start of what was sent: nothing more of it, and no failure', () => {
      const lines = editMessage(fixture('thinking-only-asked-again'), 1, { kind: 'thinking_delta', deltas: ['Pond'] });
      const result = translateLines(lines);
      expect(withoutUsage(result.events)).toEqual([
        { type: 'reasoning-delta', text: 'Pon' },
        { type: 'reasoning-delta', text: 'dering' },
        { type: 'text-delta', text: 'Answer' },
        FINISH,
      ]);
    });

    it('white space is no text, as the CLI counts it: that answer is asked again too, and its blank is never sent', () => {
      const withBlank = fixture('thinking-only-asked-again').flatMap((entry, index, all) => {
        const firstStop = all.findIndex((text) => JSON.parse(text).event?.type === 'message_delta');
        if (index !== firstStop) return [entry];
        const blank = line({
          type: 'stream_event',
          event: { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: ' ' } },
        });
        return [blank, entry];
      });
      const result = translateLines(withBlank);
      expect(visible(result.events)).toEqual(['Pon', 'dering', ' again', 'Answer']);
      expect(result.diagnostics).toEqual(['provider_c_answer_asked_again']);
    });

    it("a call drafted in the thinking of the answer asked again is given up with it: the new answer's call goes out once", () => {
      const call = FENCE('read_file', { path: 'a' });
      let lines = editMessage(fixture('thinking-only-asked-again'), 0, {
        kind: 'thinking_delta',
        deltas: ['Plan ', call],
      });
      lines = editMessage(lines, 1, { kind: 'text_delta', deltas: [`Reading.\n${call}`] });
      for (const holdUntilEnd of [false, true]) {
        const result = translateLines(lines, { toolKinds: READ_FILE_KINDS, holdUntilEnd });
        expect(result.events.filter((event) => event.type === 'tool-call')).toEqual([
          { ...READ_FILE_CALL, call: { ...READ_FILE_CALL.call, id: 'call_000000000000000000000002' } },
        ]);
        expect(result.events.at(-1)).toEqual(FINISH);
      }
      // Not asked again (its thinking is the answer): its call goes out at the end.
      const alone = editMessage(fixture('thinking-only-twice'), 1, { kind: 'thinking_delta', deltas: ['Plan ', call] });
      const result = translateLines(alone, { toolKinds: READ_FILE_KINDS });
      expect(result.events.filter((event) => event.type === 'tool-call')).toEqual([READ_FILE_CALL]);
      expect(result.events.at(-1)).toEqual(FINISH);
    });

    it('once the new answer ended, what it did not repeat is settled: a message continuing it is compared with nothing', () => {
      // The new answer repeats only 'Pon' and is cut at max_tokens; the CLI continues it in a third message.
      const lines = editMessage(
        editMessage(fixture('thinking-only-asked-again'), 1, { kind: 'thinking_delta', deltas: ['Pon'] }, 'max_tokens'),
        1,
        { kind: 'text_delta', deltas: ['Ans'] },
      );
      const starts = lines.filter((entry) => JSON.parse(entry).event?.type === 'message_start');
      const second = lines.indexOf(starts[1]);
      const end = lines.findIndex((entry, index) => index > second && JSON.parse(entry).event?.type === 'message_stop');
      const third = editMessage(
        editMessage(lines.slice(second, end + 1), 0, { kind: 'thinking_delta', deltas: ['dering on'] }, 'end_turn'),
        0,
        { kind: 'text_delta', deltas: ['wer'] },
      ).map((entry) => entry.replaceAll(JSON.parse(starts[1]).event.message.id, 'msg_third'));
      const result = translateLines([...lines.slice(0, end + 1), ...third, ...lines.slice(end + 1)]);
      expect(withoutUsage(result.events)).toEqual([
        { type: 'reasoning-delta', text: 'Pon' },
        { type: 'reasoning-delta', text: 'dering' },
        { type: 'text-delta', text: 'Ans' },
        { type: 'reasoning-delta', text: 'dering on' },
        { type: 'text-delta', text: 'wer' },
        FINISH,
      ]);
    });

    it('an answer without text cut at max_tokens is continued, not asked again: the next message goes on after it, and the client gets the usage of both', () => {
      const lines = editMessage(fixture('thinking-only-asked-again'), 0, undefined, 'max_tokens');
      const result = translateLines(lines);
      expect(result.events.filter((event) => event.type === 'usage')).toEqual([
        { type: 'usage', usage: { promptTokens: 24, completionTokens: 12, totalTokens: 36, cachedPromptTokens: 0 } },
      ]);
      expect(withoutUsage(result.events)).toEqual([
        { type: 'reasoning-delta', text: 'Pon' },
        { type: 'reasoning-delta', text: 'dering' },
        { type: 'reasoning-delta', text: 'Pondering again' },
        { type: 'text-delta', text: 'Answer' },
        FINISH,
      ]);
      expect(result.diagnostics).toEqual([]);
    });
  });

  it('reads past line types, events and fields it does not know (each CLI release adds some)', () => {
    const lines = fixture('text');
    const extended = lines.flatMap((text) => {
      const message = JSON.parse(text);
      const withNewField = line({ ...message, field_from_a_later_release: { nested: [1, 'two'] } });
      return message.type === 'result'
        ? [
            line({ type: 'line_kind_from_a_later_release', session_id: 's', payload: { text: 'not content' } }),
            line({ type: 'stream_event', event: { type: 'event_from_a_later_release', delta: { text: 'no' } } }),
            line({ type: 'system', subtype: 'ui_invalidate', event: 'ui.render' }),
            withNewField,
          ]
        : [withNewField];
    });
    const { steps: longer, state: _longerState, ...read } = translateLines(extended);
    const { steps, state: _state, ...expected } = translateLines(lines);
    expect(read).toStrictEqual(expected);
    expect(longer.filter((step) => step.events.length > 0)).toStrictEqual(
      steps.filter((step) => step.events.length > 0),
    );
  });

  it('keeps identical calls written twice on the same channel', () => {
    const text = FENCE('ls', {}) + FENCE('ls', {});
    const calls = translateLines([textLine(text), RESULT]).events.filter((event) => event.type === 'tool-call');
    expect(calls).toHaveLength(2);
  });

  it('treats a subtype starting with "error" as an error result', () => {
    const error = failureOf(translateLines([line({ type: 'result', subtype: 'error_max_turns', is_error: false })]));
    expect(error).toMatchObject({ code: 'upstream', retryable: true, detail: 'error result' });
  });

  it('tool_choice none: cuts every block out and drops it, no call and no invalid-tool-call error', () => {
    const broken = '```agent_tool_call\n{"name":"ls","arguments":{,}}\n```';
    const result = translateLines([textLine(`Sure. ${FENCE('ls', {})}${broken} Done.`), RESULT], {
      toolKinds: new Map([['ls', 'function']]),
      discardBlocks: true,
    });
    expect(result.events.filter((event) => event.type !== 'usage')).toEqual([
      { type: 'text-delta', text: 'Sure. ' },
      { type: 'text-delta', text: ' Done.' },
      { type: 'finish', reason: 'stop' },
    ]);
    expect(result.diagnostics).toEqual(['tool_fence_discarded', 'tool_fence_discarded']);
  });

  it('cuts a block out and drops it when no call is allowed (no tools, or tool_choice none): never text, never a call', () => {
    const result = translateLines([textLine(`Here.${FENCE('ls', {})}`), RESULT], { discardBlocks: true });
    expect(result.events.filter((event) => event.type === 'text-delta')).toEqual([
      { type: 'text-delta', text: 'Here.' },
    ]);
    expect(result.events.some((event) => event.type === 'tool-call')).toBe(false);
    expect(result.diagnostics).toEqual(['tool_fence_discarded']);
  });

  it('shows unfenced JSON as text', () => {
    const text = '{"name":"ls","arguments":{}}\n';
    expect(translateLines([textLine(text), RESULT]).events[0]).toEqual({ type: 'text-delta', text });
  });

  it('maps custom tools to custom calls with the raw input (docs/upstream/provider-c.md §7.4)', () => {
    const patch = '*** Begin Patch\n*** End Patch';
    const events = translateLines([textLine(FENCE('apply_patch', patch)), RESULT], {
      toolKinds: new Map([['apply_patch', 'custom']]),
    }).events;
    expect(events[0]).toEqual({
      type: 'tool-call',
      call: { id: expect.any(String), name: 'apply_patch', kind: 'custom', input: patch },
    });
  });

  it('ends with invalid_tool_call when blocks were dropped and no call was valid', () => {
    const result = translateLines([textLine('```agent_tool_call\n{"name":"ls","arguments":{,}}\n```'), RESULT]);
    const last = result.events[result.events.length - 1];
    expect(last).toMatchObject({ type: 'error', error: { code: 'invalid_tool_call' } });
    expect(result.events.some((event) => event.type === 'finish')).toBe(false);
    expect(result.diagnostics).toEqual(['tool_fence_invalid']);
  });

  it.each([
    ['broken JSON', '```agent_tool_call\n{"name":"ls","arguments":{,}}\n```', 'tool_fence_invalid'],
    ['words but no object', '```agent_tool_call\nls -la\n```', 'tool_fence_invalid'],
  ])(
    'ends with invalid_tool_call when a block (%s) was dropped beside a valid call, never the finish',
    (_case, block, diagnostic) => {
      const result = translateLines([textLine(`${FENCE('ls', {})}\n${block}`), RESULT], {
        toolKinds: new Map([['ls', 'function']]),
      });
      expect(result.events[0]).toMatchObject({ type: 'tool-call', call: { name: 'ls' } });
      expect(result.events.at(-1)).toMatchObject({
        type: 'error',
        error: { code: 'invalid_tool_call', detail: '1 tool fence(s) could not become a call, beside 1 that could' },
      });
      expect(result.events.some((event) => event.type === 'finish')).toBe(false);
      expect(result.diagnostics).toEqual([diagnostic]);
    },
  );

  it.each([
    ['an empty block', '```agent_tool_call\n\n```', '{}'],
    ['an empty object', '```agent_tool_call\n{}\n```', '{}'],
    ['an object without a name or arguments', '```agent_tool_call\n{"name":"","arguments":{}}\n```', '{}'],
    ['an object with arguments but no name', '```agent_tool_call\n{"arguments":{"path":"a"}}\n```', '{"path":"a"}'],
  ])(
    'passes %s on as a call without a name for the chat layer to judge, and finishes the turn',
    (_case, block, argumentsText) => {
      const result = translateLines([textLine(`${FENCE('ls', {})}\n${block}`), RESULT], {
        toolKinds: new Map([['ls', 'function']]),
      });
      expect(result.events.filter((event) => event.type === 'tool-call')).toEqual([
        { type: 'tool-call', call: expect.objectContaining({ name: 'ls' }) },
        { type: 'tool-call', call: { id: expect.any(String), name: '', kind: 'function', arguments: argumentsText } },
      ]);
      expect(result.events.at(-1)).toMatchObject({ type: 'finish', reason: 'stop' });
      expect(result.diagnostics).toEqual([]);
    },
  );

  it('accepts an unclosed complete fence at the result and logs it as accepted', () => {
    const result = translateLines([textLine('```agent_tool_call\n{"name":"ls","arguments":{}}\n'), RESULT]);
    expect(result.events[0]).toMatchObject({ type: 'tool-call', call: { name: 'ls', arguments: '{}' } });
    expect(result.diagnostics).toEqual(['tool_fence_unclosed:true']);
  });

  it('drops a truncated fence at the result, logs accepted=false, and reports invalid_tool_call', () => {
    const result = translateLines([textLine('ok ```agent_tool_call\n{"name":"ls","argu'), RESULT]);
    expect(result.events[0]).toEqual({ type: 'text-delta', text: 'ok ' });
    expect(result.diagnostics).toEqual(['tool_fence_unclosed:false']);
    expect(result.events[result.events.length - 1]).toMatchObject({
      type: 'error',
      error: { code: 'invalid_tool_call' },
    });
  });

  it('without a result line, flushes and finishes from the streamed usage and stop reason', () => {
    const result = translateLines([
      line({
        type: 'stream_event',
        event: { type: 'message_start', message: { id: 'm', usage: { input_tokens: 7, cache_read_input_tokens: 1 } } },
      }),
      textLine('Hi `'),
      line({
        type: 'stream_event',
        event: { type: 'message_delta', delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 4 } },
      }),
    ]);
    expect(result.events).toEqual([
      { type: 'text-delta', text: 'Hi ' },
      { type: 'text-delta', text: '`' },
      { type: 'usage', usage: { promptTokens: 8, completionTokens: 4, totalTokens: 12, cachedPromptTokens: 1 } },
      { type: 'finish', reason: 'length' },
    ]);
  });

  it('reads a field of another JSON type as absent (a delta without its own type still finds its block by Number(index))', () => {
    const result = translateLines([
      line({ type: 'system', subtype: 'init', session_id: 5 }),
      line({ type: 'stream_event', event: 'message_start' }),
      line({
        type: 'stream_event',
        event: { type: 'message_start', message: { id: 1, usage: { input_tokens: '5', output_tokens: 2 } } },
      }),
      line({
        type: 'stream_event',
        event: { type: 'content_block_start', index: '0', content_block: { type: 'text', text: 7 } },
      }),
      line({ type: 'stream_event', event: { type: 'content_block_start', index: 0, content_block: { type: 'text' } } }),
      line({ type: 'stream_event', event: { type: 'content_block_delta', index: '0', delta: { text: 'Hi' } } }),
      line({
        type: 'stream_event',
        event: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 3 } },
      }),
      line({
        type: 'stream_event',
        event: {
          type: 'message_delta',
          delta: { stop_reason: 1 },
          usage: { output_tokens: -1, cache_read_input_tokens: 4 },
        },
      }),
      line({ type: 'assistant', message: { id: 2, content: 'Hi' } }),
      line({ type: 'result', subtype: 'success', is_error: 'true', stop_reason: 'max_tokens', usage: 'none' }),
    ]);
    expect(result.events).toEqual([
      { type: 'text-delta', text: 'Hi' },
      { type: 'usage', usage: { promptTokens: 4, completionTokens: 2, totalTokens: 6, cachedPromptTokens: 4 } },
      { type: 'finish', reason: 'length' },
    ]);
    expect(result.end).toStrictEqual({ events: result.events.slice(1), accepted: true, terminal: true });
  });

  it('reads the error fields of the synthetic message and the error result by their JSON types', () => {
    const synthetic = {
      type: 'assistant',
      error: 5,
      is_api_error_message: 'yes',
      api_error_status: null,
      api_error_type: 'rate_limit_error',
      api_error_params: { rate_limit_info: { resetsAt: '1900000000' } },
      message: { model: '<synthetic>', content: ['x', { text: 'Limit reached' }, { text: 3 }] },
    };
    const rejected = { type: 'rate_limit_event', rate_limit_info: { status: 'rejected', resetsAt: '1900000000' } };
    const failed = {
      type: 'result',
      subtype: 'error_during_execution',
      is_error: true,
      result: '',
      terminal_reason: 7,
    };
    // Only the status and type have their JSON types: the detail names just them, and without a
    // reset the limit's hint is the default minute.
    const classified = { code: 'rate_limited', detail: 'error result (429, rate_limit_error)', retryAfterSeconds: 60 };
    const withErrors = failureOf(
      translateLines([
        line(rejected),
        line(synthetic),
        line({ ...failed, errors: ['boom', 4, 'again'], api_error_status: 429 }),
      ]),
    );
    expect(withErrors).toMatchObject(classified);
    expect(withErrors.upstream).toEqual({ type: 'rate_limit_error', message: 'boom again' });
    const fromMessage = failureOf(
      translateLines([line(synthetic), line({ ...failed, errors: 'boom', api_error_status: 429 })]),
    );
    expect(fromMessage).toMatchObject(classified);
    expect(fromMessage.upstream).toEqual({ type: 'rate_limit_error', message: 'Limit reached' });
  });

  describe('an answer cut at the output limit: stop_reason "max_tokens" (docs/upstream/provider-c.md §8.2)', () => {
    const usage = (promptTokens: number, completionTokens: number) => ({
      type: 'usage',
      usage: { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens, cachedPromptTokens: 0 },
    });
    const PARTS = ['Part 1. ', 'Part 2. ', 'Part 3. ', 'Part 4. '].map((text) => ({ type: 'text-delta', text }));
    const LENGTH = { type: 'finish', reason: 'length' };

    it('the real lines: the CLI asks the model to resume with a note, three times at most, then ends with an error result', () => {
      const resumed = fixture('max-tokens-resumed').map((entry) => JSON.parse(entry));
      expect(resumed.filter((message) => message.event?.type === 'message_start')).toHaveLength(2);
      expect(resumed.find((message) => message.type === 'user')).toMatchObject({
        isSynthetic: true,
        message: { content: [{ type: 'text', text: expect.stringContaining('Output token limit hit') }] },
      });
      expect(resumed.at(-1)).toMatchObject({ type: 'result', subtype: 'success', num_turns: 2 });
      const exhausted = fixture('max-tokens-exhausted').map((entry) => JSON.parse(entry));
      expect(exhausted.filter((message) => message.event?.type === 'message_start')).toHaveLength(4);
      expect(exhausted.filter((message) => message.type === 'user')).toHaveLength(3);
      expect(exhausted.find((message) => message.is_api_error_message)).toMatchObject({
        error: 'max_output_tokens',
        api_error: 'max_output_tokens',
        message: { model: '<synthetic>' },
      });
      expect(exhausted.at(-1)).toMatchObject({
        type: 'result',
        is_error: true,
        api_error: 'max_output_tokens',
        terminal_reason: 'api_error',
        num_turns: 4,
      });
    });

    it("resumed: both messages' text, the last one's finish, and the usage of both for the client (nothing billed beside it)", () => {
      for (const holdUntilEnd of [false, true]) {
        const result = translateLines(fixture('max-tokens-resumed'), { holdUntilEnd });
        expect(result.events).toEqual([
          { type: 'text-delta', text: 'First half, ' },
          { type: 'text-delta', text: 'second half.' },
          usage(24, 904),
          { type: 'finish', reason: 'stop' },
        ]);
        expect(result.steps.at(-1)).toMatchObject({
          terminal: true,
          billed: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
        });
      }
    });

    it('resumed, the turn ended before the result line (a stop sequence): the usage seen already counts the message it continued', () => {
      const lines = fixture('max-tokens-resumed');
      const result = translateLines(lines.slice(0, -1));
      expect(result.events.filter((event) => event.type === 'usage')).toEqual([usage(24, 904)]);
    });

    it("given up after three resumes: an answer, not an error: every message's text, finish length and the usage of all four; the CLI's words are nowhere", () => {
      for (const holdUntilEnd of [false, true]) {
        const result = translateLines(fixture('max-tokens-exhausted'), { holdUntilEnd });
        expect(result.end).toMatchObject({ terminal: true, accepted: true });
        expect(result.end?.unclassified).toBeUndefined();
        expect(result.events).toEqual([...PARTS, usage(40, 36), LENGTH]);
        expect(JSON.stringify(result.events)).not.toContain('API Error');
      }
    });
  });

  describe('a refused answer: stop_reason "refusal" (docs/upstream/provider-c.md §8.2)', () => {
    const REFUSED = [
      { type: 'text-delta', text: 'I will ' },
      { type: 'text-delta', text: 'not.' },
    ];
    const CONTENT_FILTER = { type: 'finish', reason: 'content_filter' };
    /** The refusal's lines with its two text deltas set to `deltas`. */
    const refusalWith = (deltas: readonly [string, string]) => {
      let next = 0;
      return fixture('refusal').map((entry) => {
        const message = JSON.parse(entry);
        if (message.event?.type !== 'content_block_delta') return entry;
        return line({
          ...message,
          event: { ...message.event, delta: { ...message.event.delta, text: deltas[next++] } },
        });
      });
    };

    it("the CLI's error result after it is the turn's end: the text once, usage and content_filter; the CLI's words are nowhere", () => {
      const result = translateLines(fixture('refusal'));
      expect(result.end).toStrictEqual({ events: [CAPTURED_USAGE, CONTENT_FILTER], accepted: true, terminal: true });
      expect(result.events).toEqual([...REFUSED, CAPTURED_USAGE, CONTENT_FILTER]);
      // What the run printed: the refused answer, a synthetic "API Error: …" message, an error result.
      const lines = fixture('refusal').map((entry) => JSON.parse(entry));
      expect(lines.find((message) => message.is_api_error_message)).toMatchObject({
        error: 'invalid_request',
        message: { model: '<synthetic>', stop_reason: 'refusal' },
      });
      expect(lines.at(-1)).toMatchObject({ type: 'result', is_error: true, stop_reason: 'refusal' });
    });

    it('held for a non-streaming request: the same answer at the end', () => {
      const result = translateLines(fixture('refusal'), { holdUntilEnd: true });
      expect(withoutUsage(result.steps.slice(0, -1).flatMap((step) => step.events))).toEqual([]);
      expect(result.events).toEqual([...REFUSED, CAPTURED_USAGE, CONTENT_FILTER]);
    });

    it('a tool-call block in it is no call, streamed or held; a broken one is no invalid-tool-call error', () => {
      const call = FENCE('read_file', { path: 'a' });
      for (const holdUntilEnd of [false, true]) {
        const result = translateLines(refusalWith(['Checking.\n', call]), { toolKinds: READ_FILE_KINDS, holdUntilEnd });
        expect(result.events).toEqual([{ type: 'text-delta', text: 'Checking.\n' }, CAPTURED_USAGE, CONTENT_FILTER]);
        const broken = translateLines(refusalWith(['Checking.\n', '```agent_tool_call\n{,}\n```']), {
          toolKinds: READ_FILE_KINDS,
          holdUntilEnd,
        });
        expect(broken.events).toEqual([{ type: 'text-delta', text: 'Checking.\n' }, CAPTURED_USAGE, CONTENT_FILTER]);
      }
    });

    it('a CLI that asks again anyway: the turn ends at the new message, which never reaches the client', () => {
      const lines = fixture('refusal-retried');
      const result = translateLines(lines);
      const second = lines.findIndex((entry, index) => index > 3 && entry.includes('"message_start"'));
      expect(result.steps).toHaveLength(second + 1);
      expect(result.end).toStrictEqual({
        events: [
          { type: 'usage', usage: { promptTokens: 12, completionTokens: 6, totalTokens: 18, cachedPromptTokens: 0 } },
          CONTENT_FILTER,
        ],
        accepted: true,
        terminal: true,
      });
      expect(visible(result.events)).toEqual(['I will ', 'not.']);
    });
  });
});

describe(mapStopReason.name, () => {
  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    [undefined, 'stop'],
    ['max_tokens', 'length'],
    ['refusal', 'content_filter'],
  ])('%s → %s (docs/upstream/provider-c.md §8.2)', (stopReason, reason) => {
    expect(mapStopReason(stopReason)).toBe(reason);
  });
});

describe(toUsageEvent.name, () => {
  it('adds cache creation and cache reads to the prompt (docs/upstream/provider-c.md §8.1)', () => {
    expect(
      toUsageEvent({ input_tokens: 3, cache_creation_input_tokens: 4, cache_read_input_tokens: 2, output_tokens: 2 }),
    ).toEqual({
      promptTokens: 9,
      completionTokens: 2,
      totalTokens: 11,
      cachedPromptTokens: 2,
    });
    expect(toUsageEvent({})).toEqual({ promptTokens: 0, completionTokens: 0, totalTokens: 0 });
  });
});

describe(AnswerRestarts.name, () => {
  it('a restarted answer that diverged gives none of its tool calls, mid-message or at its end', () => {
    const restarts = new AnswerRestarts(false);
    restarts.messageStarted();
    const mark = restarts.mark();
    expect(restarts.text('content', 'Hello')).toEqual([{ type: 'text-delta', text: 'Hello' }]);
    restarts.rewind(mark, ['content']);
    expect(restarts.text('content', 'Goodbye')).toEqual([]);
    expect(restarts.diverged).toBe(true);
    expect(restarts.call({ name: 'lookup', kind: 'function', arguments: '{}' })).toEqual([]);
    expect(restarts.messageEnded(false)).toEqual([]);
    expect(restarts.release()).toEqual([]);
    expect(restarts.restartFailure()).toBeInstanceOf(GatewayError);
  });

  it('an answer asked again that leaves what was sent partway into a piece: the repeated part and the rest go out whole', () => {
    const restarts = new AnswerRestarts(false);
    restarts.messageStarted();
    const mark = restarts.mark();
    expect(restarts.text('reasoning', 'Let me think')).toEqual([{ type: 'reasoning-delta', text: 'Let me think' }]);
    restarts.retry(mark);
    // A repeat of the start of the piece sent is held: it may be only a repeat.
    expect(restarts.text('reasoning', 'Let me')).toEqual([]);
    expect(restarts.text('reasoning', ' try')).toEqual([{ type: 'reasoning-delta', text: 'Let me try' }]);
    expect(restarts.restartFailure()).toBeUndefined();
  });
});
