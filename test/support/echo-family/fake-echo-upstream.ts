import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The wire of the test-only `echo` family (test/support/echo-family/), as small as an upstream can
 * be while still having what the shared machinery reads: a bearer per login, an SSE stream with
 * text deltas, usage and a finish, a JSON answer for non-streamed turns, and refusals by status.
 *
 *   POST /v1/echo  {"model": "...", "prompt": "...", "stream": true|false}
 *   Authorization: Bearer <the login's token>
 *
 * Streamed: `data: {"delta":"…"}` per word, `data: {"usage":{"input":n,"output":n}}`,
 * `data: {"finish":"stop"}`, `data: [DONE]`. Not streamed: `{"text","usage","finish"}`.
 * Refusals are `{"error":{"code":"…","resets_in_seconds"?:n}}` with the status that says what
 * went wrong (401 an unknown login, 429 `usage_limit` or `rate_limited`, 5xx the upstream).
 */

/** A scripted refusal: the status and the error code of its body. */
export interface EchoRefusal {
  readonly status: number;
  readonly code: string;
  /** When the spent limit resets, for a `usage_limit`. */
  readonly resetsInSeconds?: number;
}

/** One request the fake received; `login` is the name of the login whose token it carried, if any. */
export interface EchoRequest {
  readonly login?: string;
  readonly model?: string;
  readonly prompt?: string;
  readonly stream?: boolean;
}

/** What the fake answers: the login that was asked and the prompt, word by word. */
export function echoAnswer(login: string, prompt: string): string {
  return `${login} heard: ${prompt}`;
}

/**
 * The echo upstream on `127.0.0.1` and a random port. It knows each login by its token and
 * refuses a request without one of them (401); `refuse` queues refusals for one login's next
 * requests. Every request is recorded, refused or not.
 */
export class FakeEchoUpstream {
  private readonly refusals = new Map<string, EchoRefusal[]>();
  private readonly recorded: EchoRequest[] = [];

  private constructor(
    private readonly server: http.Server,
    /** Token → login name. */
    private readonly logins: ReadonlyMap<string, string>,
  ) {}

  /** Starts the fake; `logins` maps each login's name to the bearer token it accepts for it. */
  static async start(logins: Readonly<Record<string, string>>): Promise<FakeEchoUpstream> {
    let fake!: FakeEchoUpstream;
    const server = http.createServer((request, response) => void fake.handle(request, response));
    fake = new FakeEchoUpstream(server, new Map(Object.entries(logins).map(([name, token]) => [token, name])));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  /** `http://127.0.0.1:<port>/v1/echo`: the URL the family's declaration closes over. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/echo`;
  }

  /** The login's next requests are refused with these, in order; afterwards it answers again. */
  refuse(login: string, ...refusals: EchoRefusal[]): void {
    this.refusals.set(login, [...(this.refusals.get(login) ?? []), ...refusals]);
  }

  /** Every request so far, in arrival order. */
  requests(): readonly EchoRequest[] {
    return this.recorded;
  }

  /** Forgets the requests and any refusal not yet used (between tests). */
  reset(): void {
    this.recorded.length = 0;
    this.refusals.clear();
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (request.method !== 'POST' || request.url !== '/v1/echo') {
      sendJson(response, 404, { error: { code: 'not_found' } });
      return;
    }
    const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    const login = bearer === undefined ? undefined : this.logins.get(bearer);
    let body: { model?: unknown; prompt?: unknown; stream?: unknown } = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
    } catch {
      // Recorded with no fields; answered 400 below.
    }
    const prompt = typeof body.prompt === 'string' ? body.prompt : undefined;
    this.recorded.push({
      login,
      model: typeof body.model === 'string' ? body.model : undefined,
      prompt,
      stream: typeof body.stream === 'boolean' ? body.stream : undefined,
    });
    if (login === undefined) {
      sendJson(response, 401, { error: { code: 'unknown_login' } });
      return;
    }
    const refusal = this.refusals.get(login)?.shift();
    if (refusal) {
      const { status, code, resetsInSeconds } = refusal;
      sendJson(response, status, {
        error: { code, ...(resetsInSeconds !== undefined ? { resets_in_seconds: resetsInSeconds } : {}) },
      });
      return;
    }
    if (prompt === undefined) {
      sendJson(response, 400, { error: { code: 'no_prompt' } });
      return;
    }
    const text = echoAnswer(login, prompt);
    const usage = { input: prompt.split(' ').length, output: text.split(' ').length };
    if (body.stream !== true) {
      sendJson(response, 200, { text, usage, finish: 'stop' });
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const words = text.split(' ');
    for (const [index, word] of words.entries()) {
      response.write(`data: ${JSON.stringify({ delta: index === 0 ? word : ` ${word}` })}\n\n`);
    }
    response.write(`data: ${JSON.stringify({ usage })}\n\n`);
    response.write(`data: ${JSON.stringify({ finish: 'stop' })}\n\n`);
    response.end('data: [DONE]\n\n');
  }
}

function sendJson(response: http.ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}
