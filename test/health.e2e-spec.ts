import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { resolveBuildInfo } from '../src/common/build/build-info';
import { DrainService } from '../src/common/lifecycle/drain.service';
import { REPO_ROOT } from './support/child-gateway';
import { useGateway } from './support/create-test-app';

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const COMMIT = '0123456789abcdef0123456789abcdef01234567';

async function getJson(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { headers });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    body: (await response.json()) as Record<string, unknown>,
  };
}

describe('health endpoints', () => {
  describe('with build provenance from BUILD_VERSION, BUILD_COMMIT and BUILD_DATE and a bearer secret', () => {
    const gateway = useGateway(() => ({
      BUILD_VERSION: 'v0.1.0',
      BUILD_COMMIT: COMMIT,
      BUILD_DATE: '2026-03-04T05:06:07Z',
      GATEWAY_BEARER_SECRET: 'health-secret-0123',
    }));

    it.each(['/health', '/health/live'])(
      'GET %s returns the contract health document without a bearer',
      async (route) => {
        const { status, type, body } = await getJson(`${gateway.url}${route}`);
        expect(status).toBe(200);
        expect(type).toMatch(/^application\/json/);
        expect(body).toEqual({
          status: 'ok',
          contract_version: '2.0.0',
          build: {
            version: 'v0.1.0',
            commit: COMMIT,
            build_date: '2026-03-04T05:06:07Z',
            go_version: `node${process.versions.node}`,
            modified: expect.any(Boolean),
          },
        });
        expect((body.build as Record<string, string>).go_version).toMatch(/^node\d+\.\d+\.\d+$/);
      },
    );

    it.each(['/health', '/health/ready'])(
      'GET %s says its JSON depends on Accept-Encoding (Vary), so a cache keeps gzipped and plain apart',
      async (route) => {
        const response = await fetch(`${gateway.url}${route}`);
        expect(response.headers.get('vary')).toMatch(/\bAccept-Encoding\b/i);
      },
    );

    it('GET /health/ready answers 200 {"status":"ready"} while serving', async () => {
      const { status, body } = await getJson(`${gateway.url}/health/ready`);
      expect(status).toBe(200);
      expect(body).toEqual({ status: 'ready' });
    });

    it('never asks health probes for auth, even with a wrong or malformed bearer', async () => {
      for (const authorization of ['Bearer wrong', 'Bearer', 'Basic Zm9vOmJhcg==']) {
        for (const route of ['/health', '/health/live', '/health/ready']) {
          expect((await getJson(`${gateway.url}${route}`, { authorization })).status).toBe(200);
        }
      }
      // …while the secret really is enforced elsewhere.
      expect((await fetch(`${gateway.url}/v1/models`)).status).toBe(401);
    });

    it('reports 503 {"status":"draining"} on readiness once draining, while liveness stays 200', async () => {
      gateway.app.get(DrainService).startDraining();
      const ready = await getJson(`${gateway.url}/health/ready`);
      expect(ready.status).toBe(503);
      expect(ready.body).toEqual({ status: 'draining' });
      expect((await getJson(`${gateway.url}/health/live`)).body.status).toBe('ok');
      // Chat and models are still served while draining (docs/design/decisions.md §6).
      expect(
        (await fetch(`${gateway.url}/v1/models`, { headers: { authorization: 'Bearer health-secret-0123' } })).status,
      ).toBe(200);
    });
  });

  describe('without stamps or overrides (an unbuilt run from the sources)', () => {
    const gateway = useGateway();

    it('falls back to devel and unknown, with a build_date still in the contract format', async () => {
      const { body } = await getJson(`${gateway.url}/health`);
      const build = body.build as Record<string, unknown>;
      expect(build.version).toBe('devel');
      expect(build.commit).toBe('unknown');
      expect(build.build_date).toMatch(TIMESTAMP);
      expect(build.modified).toBe(false);
    });
  });
});

describe('build stamp (scripts/stamp-build.mjs, the second half of `npm run build`)', () => {
  let outDir: string;

  beforeEach(() => {
    outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-stamp-'));
  });

  afterEach(() => fs.rmSync(outDir, { recursive: true, force: true }));

  function stamp(env: Record<string, string>) {
    // As package.json's `build` runs it.
    const script = path.join(REPO_ROOT, 'scripts', 'stamp-build.mjs');
    const run = spawnSync(process.execPath, ['--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', script], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, BUILD_OUT_DIR: outDir, ...env },
      encoding: 'utf8',
    });
    return {
      ...run,
      info:
        run.status === 0
          ? (JSON.parse(fs.readFileSync(path.join(outDir, 'build-info.json'), 'utf8')) as Record<string, unknown>)
          : undefined,
    };
  }

  const packageVersion = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).version as string;

  it('stamps version, full commit, dirty flag and UTC date from git, and the health document reports them', () => {
    const gitHead = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' });
    const { status, info } = stamp({});
    expect(status).toBe(0);
    expect(info!.build_date).toMatch(TIMESTAMP);
    expect(typeof info!.modified).toBe('boolean');
    expect(typeof info!.version).toBe('string');
    if (gitHead.status === 0) {
      // A clone: the commit is the full 40-character HEAD; the version is `git describe --tags` or v+package.
      expect(info!.commit).toBe(gitHead.stdout.trim());
      expect(info!.commit).toMatch(/^[0-9a-f]{40}$/);
      const describe = spawnSync('git', ['describe', '--tags'], { cwd: REPO_ROOT, encoding: 'utf8' });
      expect(info!.version).toBe(describe.status === 0 ? describe.stdout.trim() : `v${packageVersion}`);
      const porcelain = spawnSync('git', ['status', '--porcelain'], { cwd: REPO_ROOT, encoding: 'utf8' });
      expect(info!.modified).toBe(porcelain.stdout.trim() !== '');
    }
    const resolved = resolveBuildInfo({}, path.join(outDir, 'build-info.json'));
    expect(resolved).toMatchObject({ version: info!.version, build_date: info!.build_date, modified: info!.modified });
  });

  it('works without git: v + package version, no commit (health says unknown), not modified', () => {
    const { status, info } = stamp({ GIT_DIR: path.join(outDir, 'no-such-repository') });
    expect(status).toBe(0);
    expect(info).toEqual({
      version: `v${packageVersion}`,
      modified: false,
      build_date: expect.stringMatching(TIMESTAMP),
    });
    expect(resolveBuildInfo({}, path.join(outDir, 'build-info.json')).commit).toBe('unknown');
  });

  it('uses BUILD_* when the image build passes them, and rejects a short commit', () => {
    const { info } = stamp({
      BUILD_VERSION: 'v0.1.0',
      BUILD_COMMIT: COMMIT,
      BUILD_DATE: '2026-03-04T05:06:07Z',
      GIT_DIR: '/nonexistent',
    });
    expect(info).toEqual({ version: 'v0.1.0', commit: COMMIT, modified: false, build_date: '2026-03-04T05:06:07Z' });
    const bad = stamp({ BUILD_COMMIT: 'abc1234' });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/BUILD_COMMIT must be a full 40-character/);
  });

  it('rejects a BUILD_DATE that does not exist, with the rule the gateway applies at start-up', () => {
    for (const written of ['2026-02-30T00:00:00Z', '2026-01-01T24:00:00Z']) {
      const bad = stamp({ BUILD_DATE: written, GIT_DIR: '/nonexistent' });
      expect({ status: bad.status, stderr: bad.stderr }).toEqual({
        status: 1,
        stderr: `stamp-build: BUILD_DATE must be a UTC timestamp YYYY-MM-DDTHH:MM:SSZ that exists (a day of its month, hours 00 to 23) (got ${JSON.stringify(written)})\n`,
      });
    }
    expect(stamp({ BUILD_DATE: '2028-02-29T23:59:59Z', GIT_DIR: '/nonexistent' }).info?.build_date).toBe(
      '2028-02-29T23:59:59Z',
    );
  });

  it('copies the JSON data files (model catalog, faithful profile) that tsc leaves behind', () => {
    expect(stamp({ GIT_DIR: '/nonexistent' }).status).toBe(0);
    expect(fs.existsSync(path.join(outDir, 'models', 'catalog.json'))).toBe(true);
    const sourceJson = spawnSync('git', ['ls-files', 'src'], { cwd: REPO_ROOT, encoding: 'utf8' });
    if (sourceJson.status === 0) {
      for (const file of sourceJson.stdout
        .split('\n')
        .filter((name) => name.endsWith('.json') && !name.includes('__fixtures__'))) {
        expect(fs.existsSync(path.join(outDir, path.relative('src', file)))).toBe(true);
      }
    }
    // Test fixtures are not runtime data.
    const copied = fs.readdirSync(outDir, { recursive: true }).map(String);
    expect(copied.filter((name) => name.includes('__fixtures__'))).toEqual([]);
  });
});
