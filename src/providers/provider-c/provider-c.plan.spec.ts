import * as fs from 'node:fs';
import type { ChatEvent } from '../../core/chat-event';
import type { PlanReport } from '../../core/plan-usage';
import { claudeCapturePath } from '../../../test/support/oracle-pins';
import { planReportOf } from './provider-c.plan';
import { createStreamState, parseStreamLine, translateLine } from './provider-c.stream';

/** Real stdout lines of the pinned Claude Code (see __fixtures__/README.md). */
const fixture = (name: string) =>
  fs
    .readFileSync(claudeCapturePath(`${name}.jsonl`), 'utf8')
    .split('\n')
    .filter((line) => line !== '');

/** The resets the metered capture cases used (scripts/capture-provider-c-fixtures.ts), in epoch ms. */
const FIVE_HOUR_RESET = 1_900_000_000_000;
const WEEK_RESET = 1_900_400_000_000;

interface RunResult {
  events: ChatEvent[];
  terminal: boolean;
  failed: boolean;
  reports: PlanReport[];
}

/** A captured run through the translation: its events, how it ended, and the plan reports it left. */
const run = (name: string): RunResult => runLines(fixture(name));

function runLines(lines: readonly string[]): RunResult {
  const state = createStreamState({ toolKinds: new Map(), discardBlocks: true });
  const events: ChatEvent[] = [];
  const reports: PlanReport[] = [];
  for (const text of lines) {
    const step = translateLine(parseStreamLine(text)!, state, { stderr: () => '' });
    events.push(...step.events);
    if (state.planReport) reports.push(state.planReport);
    state.planReport = undefined;
    // A failed run ends on a step whose failure the family's `classify` reads (`unclassified`).
    const failed = step.failure !== undefined || step.unclassified !== undefined;
    if (step.terminal || failed) return { events, terminal: step.terminal === true, failed, reports };
  }
  return { events, terminal: false, failed: false, reports };
}

describe(planReportOf.name, () => {
  it('a paid answer (plan rejected, extra usage allowed and in use) is delivered and finished, and reported as extra usage in use on a spent five-hour window', () => {
    const result = run('extra-usage-in-use');
    expect(result).toMatchObject({ terminal: true, failed: false });
    expect(result.events.filter((event) => event.type === 'text-delta')).toEqual([
      { type: 'text-delta', text: 'Hel' },
      { type: 'text-delta', text: 'lo' },
    ]);
    expect(result.events.at(-1)).toEqual({ type: 'finish', reason: 'stop' });
    expect(result.reports).toEqual([
      {
        windows: [{ name: 'five_hour', windowSeconds: 18_000, usedRatio: 1, resetsAt: FIVE_HOUR_RESET }],
        paid: { kind: 'extra_usage', available: true, inUse: true },
        planSpent: true,
        spentUntil: FIVE_HOUR_RESET,
        source: 'turn',
      },
    ]);
  });

  it.each<[string, PlanReport]>([
    [
      'extra-usage-available',
      {
        windows: [{ name: 'five_hour', windowSeconds: 18_000, resetsAt: FIVE_HOUR_RESET }],
        paid: { kind: 'extra_usage', available: true, inUse: false },
        planSpent: false,
        source: 'turn',
      },
    ],
    [
      'extra-usage-out-of-credits',
      {
        windows: [{ name: 'five_hour', windowSeconds: 18_000, resetsAt: FIVE_HOUR_RESET }],
        paid: { kind: 'extra_usage', available: false, inUse: false, disabledReason: 'out_of_credits' },
        planSpent: false,
        source: 'turn',
      },
    ],
    [
      'extra-usage-org-disabled',
      {
        windows: [{ name: 'seven_day', windowSeconds: 604_800, usedRatio: 0.6, resetsAt: WEEK_RESET }],
        paid: { kind: 'extra_usage', available: false, inUse: false, disabledReason: 'org_level_disabled' },
        planSpent: false,
        source: 'turn',
      },
    ],
  ])('%s: delivered, and reported within the plan with what extra usage can do', (name, expected) => {
    const result = run(name);
    expect(result).toMatchObject({ terminal: true, failed: false });
    expect(result.reports).toEqual([expected]);
  });

  it('a plain answer reports the plan allowed and nothing of extra usage', () => {
    expect(run('text').reports).toEqual([{ windows: [], planSpent: false, source: 'turn' }]);
  });

  it("a refused limit (429) still reports the spent window; the run's failure is classified elsewhere", () => {
    const result = run('limit-429');
    expect(result.failed).toBe(true);
    expect(result.reports).toEqual([
      expect.objectContaining({
        windows: [expect.objectContaining({ name: 'five_hour', usedRatio: 1, resetsAt: FIVE_HOUR_RESET })],
        planSpent: true,
      }),
    ]);
  });

  it.each(['long-context-429', 'long-context-credits-429'])(
    "%s: the long-context refusal's bare `rejected` is no report of the plan (the login is not spent)",
    (name) => {
      const result = run(name);
      expect(result.failed).toBe(true);
      expect(result.reports).toEqual([]);
    },
  );

  it('a short-term rate limit\'s bare `rejected` ("not your usage limit") is no report of the plan: nothing is spent', () => {
    const result = run('rate-limit-429-no-reset');
    expect(result.failed).toBe(true);
    expect(result.reports).toEqual([]);
  });

  it("the organization's pause at its daily cap (`dailyCapPaused`) is no report of the plan: its `rejected` is the pause's", () => {
    const result = run('daily-cap-paused-429');
    expect(result.failed).toBe(true);
    expect(result.reports).toEqual([]);
    expect(planReportOf({ status: 'rejected', isUsingOverage: false, dailyCapPaused: true })).toBeUndefined();
    // A window named beside the pause keeps only the share the CLI printed: the pause spends none.
    expect(
      planReportOf({ status: 'rejected', rateLimitType: 'five_hour', utilization: 0.4, dailyCapPaused: true }),
    ).toEqual({ windows: [{ name: 'five_hour', windowSeconds: 18_000, usedRatio: 0.4 }], source: 'turn' });
    // Without a share printed, the window beside the pause has no known use: the pause is no spent window.
    expect(planReportOf({ status: 'rejected', rateLimitType: 'seven_day', dailyCapPaused: true })).toEqual({
      windows: [{ name: 'seven_day', windowSeconds: 604_800 }],
      source: 'turn',
    });
  });

  it("the plan's own limit (`usage_limit_reached`) reports its bare `rejected` as the plan spent, once the run's error result says so", () => {
    // The daily-cap capture without its pause marker: a plan limit whose event names nothing but `rejected`.
    const lines = fixture('daily-cap-paused-429').map((text) =>
      text
        .replace(/,"dailyCapPaused":true/g, '')
        .replace(/Usage is paused for your organization/g, "You've hit your limit"),
    );
    expect(lines.join('\n')).not.toContain('dailyCapPaused');
    const result = runLines(lines);
    expect(result.failed).toBe(true);
    expect(result.reports).toEqual([{ windows: [], planSpent: true, source: 'turn' }]);
    // Held until the error result: the synthetic message before it reports nothing yet.
    const state = createStreamState({ toolKinds: new Map(), discardBlocks: true });
    for (const text of lines.slice(0, -1)) translateLine(parseStreamLine(text)!, state, { stderr: () => '' });
    expect(state.planReport).toBeUndefined();
  });

  it("a bare `rejected` is dropped when the run ends otherwise: an answer, or a failure that is not the plan's limit", () => {
    const bare = fixture('rate-limit-429-no-reset').find((text) => text.includes('"rate_limit_event"'))!;
    // The CLI asked again and was answered: the answer's own event is the only report.
    const answered = fixture('text');
    expect(runLines([answered[0], bare, ...answered.slice(1)]).reports).toEqual(run('text').reports);
    // An overloaded API, not a limit.
    const overloaded = fixture('overloaded-529');
    const failed = runLines([overloaded[0], bare, ...overloaded.slice(1)]);
    expect(failed.failed).toBe(true);
    expect(failed.reports).toEqual([]);
  });

  it('keeps the reset of a rejected plan whatever meter limits: for extra usage itself (`overage`) the later of its two resets', () => {
    const paidOverage = {
      status: 'rejected',
      rateLimitType: 'overage',
      overageStatus: 'allowed',
      isUsingOverage: true,
    } as const;
    expect(planReportOf({ ...paidOverage, resetsAt: 1_900_000_000, overageResetsAt: 1_900_086_400 })).toEqual({
      windows: [],
      paid: { kind: 'extra_usage', available: true, inUse: true },
      planSpent: true,
      spentUntil: 1_900_086_400_000,
      source: 'turn',
    });
    expect(planReportOf({ ...paidOverage, resetsAt: 1_900_086_400, overageResetsAt: 1_900_000_000 })?.spentUntil).toBe(
      1_900_086_400_000,
    );
    expect(planReportOf({ ...paidOverage, overageResetsAt: 1_900_000_000 })?.spentUntil).toBe(1_900_000_000_000);
    // A plan window's own reset is the plan's; the extra usage's reset is not when it does not limit.
    expect(
      planReportOf({
        status: 'rejected',
        rateLimitType: 'five_hour',
        resetsAt: 1_900_000_000,
        overageResetsAt: 1_900_086_400,
      })?.spentUntil,
    ).toBe(1_900_000_000_000);
    // Within the plan, or with no reset given, nothing rests on it.
    expect(planReportOf({ status: 'allowed', rateLimitType: 'overage', resetsAt: 1_900_000_000 })?.spentUntil).toBe(
      undefined,
    );
    expect(planReportOf({ status: 'rejected', rateLimitType: 'overage', resetsAt: 0 })?.spentUntil).toBe(undefined);
  });

  it('reads each field on its own: overage-in-use alone counts as paid, a limiting `overage` claim is no plan window, an empty event is nothing', () => {
    expect(planReportOf({ status: 'allowed', overageStatus: 'allowed', overageInUse: true })).toEqual({
      windows: [],
      paid: { kind: 'extra_usage', available: true, inUse: true },
      planSpent: false,
      source: 'turn',
    });
    expect(planReportOf({ status: 'rejected', rateLimitType: 'overage', resetsAt: 1_900_000_000 })).toEqual({
      windows: [],
      planSpent: true,
      spentUntil: 1_900_000_000_000,
      source: 'turn',
    });
    expect(planReportOf({ overageEnabled: false })).toEqual({
      windows: [],
      paid: { kind: 'extra_usage', available: false, inUse: false },
      source: 'turn',
    });
    // `allowed_warning` still serves the spent plan from extra usage, as `allowed` does.
    expect(planReportOf({ overageStatus: 'allowed_warning' })).toEqual({
      windows: [],
      paid: { kind: 'extra_usage', available: true, inUse: false },
      source: 'turn',
    });
    // A reason alone says extra usage is off.
    expect(planReportOf({ overageDisabledReason: 'org_level_disabled' })).toEqual({
      windows: [],
      paid: { kind: 'extra_usage', available: false, inUse: false, disabledReason: 'org_level_disabled' },
      source: 'turn',
    });
    expect(planReportOf({})).toBeUndefined();
    expect(planReportOf({ rateLimitType: 'seven_day_overage_included', utilization: 0.25 })).toEqual({
      windows: [{ name: 'seven_day_overage_included', windowSeconds: 604_800, usedRatio: 0.25 }],
      source: 'turn',
    });
    expect(planReportOf({ rateLimitType: 'seven_day_opus', utilization: 0.9, resetsAt: 0 })).toEqual({
      windows: [{ name: 'seven_day_opus', windowSeconds: 604_800, usedRatio: 0.9, model: 'opus' }],
      source: 'turn',
    });
  });

  it("a rejected Opus or Sonnet weekly window spends that model family's window, not the plan", () => {
    expect(
      planReportOf({
        status: 'rejected',
        rateLimitType: 'seven_day_sonnet',
        resetsAt: 1_900_000_000,
        overageStatus: 'allowed',
        isUsingOverage: true,
      }),
    ).toEqual({
      windows: [
        {
          name: 'seven_day_sonnet',
          windowSeconds: 604_800,
          usedRatio: 1,
          resetsAt: 1_900_000_000_000,
          model: 'sonnet',
        },
      ],
      paid: { kind: 'extra_usage', available: true, inUse: true },
      planSpent: false,
      source: 'turn',
    });
  });
});
