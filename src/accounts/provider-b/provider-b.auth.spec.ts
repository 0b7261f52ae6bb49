import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FakeCodeAssist } from '../../../test/support/fake-provider-b';
import { writeCredsFile } from '../../../test/support/provider-b-fixtures';
import type { RecordingLogger } from '../../../test/support/recorders';
import { recordingLogger } from '../../../test/support/recorders';
import type { GatewayError } from '../../core/gateway.error';
import { ProviderBTokenSource } from './provider-b.auth';

describe(ProviderBTokenSource.name, () => {
  let fake: FakeCodeAssist;
  let dir: string;
  let logger: RecordingLogger;
  const signal = new AbortController().signal;

  beforeAll(async () => (fake = await FakeCodeAssist.start()));
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.reset();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-auth-'));
    logger = recordingLogger();
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const readFile = (file: string) => JSON.parse(fs.readFileSync(file, 'utf8'));

  it('writes the refreshed token back into the file it refreshed, keeping its other members (docs/upstream/provider-b.md §2.4)', async () => {
    const file = writeCredsFile(dir, {
      accessToken: 'access-old',
      refreshToken: 'rt-old',
      expiryDateMs: Date.now() - 1000,
      extra: { id_token: 'id-old' },
    });
    fake.enqueue('token', { body: { access_token: 'access-refreshed', expires_in: 3600 } });
    const credential = await new ProviderBTokenSource(file, fake.tokenUrl).current(signal, logger);
    expect(credential.accessToken).toBe('access-refreshed');
    expect(readFile(file)).toMatchObject({
      access_token: 'access-refreshed',
      refresh_token: 'rt-old',
      id_token: 'id-old',
    });
    expect(logger.records.map((record) => record.event)).not.toContain('provider_b_auth_persist_superseded');
  });

  it('fails a login file the system refuses with its errno and the file fix, not a new login', async () => {
    // A directory where the file should be: EISDIR, the refusal a test running as root meets too.
    const file = path.join(dir, 'oauth_creds.json');
    fs.mkdirSync(file);
    const failure = (await new ProviderBTokenSource(file, fake.tokenUrl)
      .current(signal, logger)
      .catch((error: unknown) => error)) as GatewayError;
    expect(failure).toMatchObject({
      code: 'auth',
      provider: 'provider_b',
      detail: 'provider_b login file unreadable: EISDIR',
      fix: expect.stringContaining(`${file} is a directory, not a login file`),
    });
    expect(failure.publicMessage).toContain('(login file unreadable: EISDIR;');
    expect(failure.publicMessage).not.toContain('"Login with Google"');
    expect(logger.records).toEqual([
      expect.objectContaining({ event: 'provider_b_auth_unavailable', reason: 'unreadable' }),
    ]);
  });

  it('never writes the old login over a file rewritten during the refresh (a new gemini login), and uses the new one', async () => {
    const file = writeCredsFile(dir, {
      accessToken: 'access-old',
      refreshToken: 'rt-old',
      expiryDateMs: Date.now() - 1000,
      extra: { id_token: 'id-old' },
    });
    fake.enqueue('token', {
      delayMs: 300,
      body: { access_token: 'access-old-refreshed', expires_in: 3600, id_token: 'id-old-refreshed' },
    });
    const source = new ProviderBTokenSource(file, fake.tokenUrl);
    const pending = source.current(signal, logger);
    await fake.waitForRequests('token', 1);
    // `gemini` logged in again (perhaps with another account) while the refresh was on its way.
    writeCredsFile(dir, {
      accessToken: 'access-new-login',
      refreshToken: 'rt-new-login',
      expiryDateMs: Date.now() + 3_600_000,
      extra: { id_token: 'id-new-login' },
    });
    const fresh = readFile(file);
    const credential = await pending;
    expect(readFile(file)).toEqual(fresh);
    expect(credential.accessToken).toBe('access-new-login');
    expect(source.cached()?.accessToken).toBe('access-new-login');
    expect(logger.records.map((record) => record.event)).toContain('provider_b_auth_persist_superseded');
    expect(logger.text()).not.toMatch(/access-|rt-|id-/);
  });
});
