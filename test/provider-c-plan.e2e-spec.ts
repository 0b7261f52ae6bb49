import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { contents, postChat, streamChat } from './support/chat-sse';
import type { TestGateway } from './support/create-test-app';
import { startGateway } from './support/create-test-app';
import { AccountPools } from '../src/accounts/account-pools';
import type { THIRD_PARTY_MESSAGES } from './support/fake-anthropic-api';
import { API_ERRORS, FakeAnthropicApi } from './support/fake-anthropic-api';
import { realClaudeGatewaySettings } from './support/real-claude';

/**
 * What Anthropic meters and refuses on a Claude subscription, end to end with the REAL Claude
 * Code binary (2.1.332) against the loopback fake of the Anthropic API: the third-party refusal
 * (docs/troubleshooting.md "extra_usage_required") and an answer paid from extra usage, which the
 * CLI reports in its `rate_limit_event` and provider_c hands to the login's account pool. Each test
 * has its own gateway: what one login's plan says must not leak into another test's turns.
 */

jest.setTimeout(60_000);

let api: FakeAnthropicApi;
let home: string;
let gateway: TestGateway | undefined;

beforeAll(async () => {
  api = await FakeAnthropicApi.start();
});
afterAll(async () => {
  await api.close();
});
beforeEach(async () => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'provider-c-plan-'));
  api.script([]);
  api.meter(undefined);
  gateway = await startGateway(realClaudeGatewaySettings(api.baseUrl, home));
});
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  fs.rmSync(home, { recursive: true, force: true });
});

/** The gateway's log records of one request. */
function recordsOf(headers: Headers, event: string): Record<string, unknown>[] {
  const requestId = headers.get('x-request-id');
  return gateway!.logs.records(event).filter((record) => record.reqId === requestId);
}

/** What the answer says, beside what it must name: Anthropic's extra usage, where to add it, that no retry helps. */
function expectRefusal(status: number, body: any): void {
  expect(status).toBe(403);
  expect(body.error).toMatchObject({ type: 'permission_error', code: 'extra_usage_required', param: null });
  expect(body.error.message).toContain('third-party app');
  expect(body.error.message).toContain("Claude's extra usage");
  expect(body.error.message).toContain('claude.ai/settings/usage');
  expect(body.error.message).toContain('another model family');
  // Our words only: the API's sentence is for the log.
  expect(JSON.stringify(body)).not.toMatch(/Third-party apps now|keep going|API Error/);
}

describe("provider_c: Anthropic's third-party refusal with the real claude", () => {
  it.each<[keyof typeof THIRD_PARTY_MESSAGES, string]>([
    ['plain', 'Third-party apps now draw from your extra usage'],
    ['outOfExtraUsage', "You're out of extra usage"],
  ])(
    'docs/upstream/provider-c.md §11.31 %s wording, streamed: 403 extra_usage_required before any SSE byte, one claude run (its own three calls), the words on the log line',
    async (wording, words) => {
      api.script([API_ERRORS.thirdParty(wording)]);
      const result = await streamChat(gateway!, {});
      expect(result.headers.get('content-type')).toContain('application/json');
      expectRefusal(result.status, result.body);
      expect(result.headers.get('retry-after')).toBeNull();
      // One child: the CLI asked three times on its own, the gateway never again.
      expect(recordsOf(result.headers, 'provider_c_process_start')).toHaveLength(1);
      expect(api.messages()).toHaveLength(3);
      expect(recordsOf(result.headers, 'upstream_retry')).toEqual([]);
      expect(recordsOf(result.headers, 'upstream_turn_failed')).toEqual([
        expect.objectContaining({
          provider: 'provider_c',
          account: 'default',
          error_code: 'extra_usage_required',
          upstream_status: 400,
          upstream_message: expect.stringContaining(words),
        }),
      ]);
      expect(recordsOf(result.headers, 'chat_completion')).toEqual([
        expect.objectContaining({ status: 403, error_code: 'extra_usage_required' }),
      ]);
    },
  );

  it('docs/upstream/provider-c.md §11.31 the organisation wording, not streamed: the same 403 after one run; the login is not taken out', async () => {
    // The CLI's own three calls are refused; what follows is answered.
    const refusal = API_ERRORS.thirdParty('organization');
    api.script([refusal, refusal, refusal, { type: 'stream', blocks: [{ kind: 'text', deltas: ['ok'] }] }]);
    const response = await postChat(gateway!, {});
    expectRefusal(response.status, await response.json());
    expect(recordsOf(response.headers, 'provider_c_process_start')).toHaveLength(1);
    expect(api.messages()).toHaveLength(3);
    // Not a dead login: the next request (the fake now answers) runs on it.
    const next = await streamChat(gateway!, {});
    expect(next.status).toBe(200);
    expect(contents(next)).toEqual(['ok']);
  });
});

describe('provider_c: an answer paid from extra usage, with the real claude', () => {
  it("docs/upstream/provider-c.md §11.32 is delivered (200, exit 0), and the login's plan shows the five-hour window spent and extra usage in use", async () => {
    const reset = Math.floor(Date.now() / 1000) + 3600;
    api.meter({
      status: 'rejected',
      reset,
      representativeClaim: 'five_hour',
      windows: { '5h': { status: 'rejected', reset, utilization: 1.01 } },
      overage: { status: 'allowed', reset: reset + 86_400, inUse: true },
    });
    api.script([{ type: 'stream', blocks: [{ kind: 'text', deltas: ['Paid ', 'answer'] }] }]);
    const result = await streamChat(gateway!, {});
    expect(result.status).toBe(200);
    expect(contents(result)).toEqual(['Paid ', 'answer']);
    expect(result.done).toBe(true);
    expect(recordsOf(result.headers, 'upstream_turn_failed')).toEqual([]);
    const pool = gateway!.app.get(AccountPools, { strict: false }).poolOf('provider_c')!;
    expect(pool.planOf('default')).toEqual({
      windows: [{ name: 'five_hour', windowSeconds: 18_000, usedRatio: 1, resetsAt: reset * 1000 }],
      paid: { kind: 'extra_usage', available: true, inUse: true },
      planSpent: true,
      source: 'turn',
    });
  });

  it('within the plan, with extra usage spent: the plan report says so, nothing is paid', async () => {
    const reset = Math.floor(Date.now() / 1000) + 3600;
    api.meter({
      status: 'allowed',
      reset,
      representativeClaim: 'five_hour',
      windows: { '5h': { status: 'allowed', reset, utilization: 0.2 } },
      overage: { status: 'rejected', disabledReason: 'out_of_credits' },
    });
    const result = await streamChat(gateway!, {});
    expect(result.status).toBe(200);
    const pool = gateway!.app.get(AccountPools, { strict: false }).poolOf('provider_c')!;
    expect(pool.planOf('default')).toMatchObject({
      paid: { kind: 'extra_usage', available: false, inUse: false, disabledReason: 'out_of_credits' },
      planSpent: false,
    });
  });
});
