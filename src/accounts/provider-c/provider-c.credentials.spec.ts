import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { GatewayError } from '../../core/gateway.error';
import { credentialsFileOf, refreshCredentialsAhead } from './provider-c.credentials';

const silent = { info: () => undefined, warn: () => undefined, debug: () => undefined, error: () => undefined };

describe(refreshCredentialsAhead.name, () => {
  let dir: string;
  let server: http.Server;
  let url: string;
  let answer: { status: number; body: unknown };
  const grants: unknown[] = [];

  beforeAll(async () => {
    server = http.createServer((request, response) => {
      let text = '';
      request.on('data', (chunk) => (text += chunk));
      request.on('end', () => {
        grants.push({ contentType: request.headers['content-type'], body: JSON.parse(text) });
        response.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/oauth/token`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-credentials-'));
    grants.length = 0;
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const store = (expiresAt: number) =>
    fs.writeFileSync(
      credentialsFileOf(dir),
      JSON.stringify({
        claudeAiOauth: { accessToken: 'old', refreshToken: 'r1', expiresAt, subscriptionType: 'max' },
        other: 1,
      }),
    );
  const stored = () => JSON.parse(fs.readFileSync(credentialsFileOf(dir), 'utf8'));

  it('leaves a login alone until it expires within the window', async () => {
    store(Date.now() + 3600_000);
    await refreshCredentialsAhead(dir, url, 300_000, silent);
    expect(grants).toEqual([]);
  });

  it("renews a login about to expire with the CLI's JSON grant and keeps every other field", async () => {
    store(1_000_000 + 60_000);
    answer = { status: 200, body: { access_token: 'new', expires_in: 3600 } };
    await refreshCredentialsAhead(dir, url, 300_000, silent, () => 1_000_000);
    expect(grants).toEqual([
      {
        contentType: 'application/json',
        body: {
          grant_type: 'refresh_token',
          refresh_token: 'r1',
          client_id: '9d1c250a-e61b-44d9-88ed-5944d1962f5e',
          scope: 'user:profile user:inference user:sessions:claude_code user:mcp_servers',
        },
      },
    ]);
    expect(stored()).toEqual({
      claudeAiOauth: {
        accessToken: 'new',
        refreshToken: 'r1',
        expiresAt: 1_000_000 + 3600_000,
        subscriptionType: 'max',
      },
      other: 1,
    });
  });

  it('calls a refused refresh token a dead login, and any other failure worth another try', async () => {
    store(Date.now() + 60_000);
    answer = { status: 400, body: { error: 'invalid_grant' } };
    await expect(refreshCredentialsAhead(dir, url, 300_000, silent)).rejects.toMatchObject({ code: 'auth' });
    answer = { status: 503, body: {} };
    const failure = await refreshCredentialsAhead(dir, url, 300_000, silent).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(GatewayError);
    expect((failure as GatewayError).code).toBe('upstream');
    expect(stored().claudeAiOauth.accessToken).toBe('old');
  });
});
