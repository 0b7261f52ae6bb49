import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { BUILD_STAMP_PATH, resolveBuildInfo } from './build-info';

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

describe(resolveBuildInfo.name, () => {
  let directory: string;
  let stampPath: string;

  beforeEach(() => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'build-info-'));
    stampPath = path.join(directory, 'build-info.json');
  });

  afterEach(() => fs.rmSync(directory, { recursive: true, force: true }));

  const commit = 'a'.repeat(40);
  const stamp = { version: 'v0.1.0-3-gabcdef0', commit, build_date: '2026-01-02T03:04:05Z', modified: true };

  it('reads the stamp written by `npm run build`', () => {
    fs.writeFileSync(stampPath, JSON.stringify(stamp));
    expect(resolveBuildInfo({}, stampPath)).toEqual({
      version: 'v0.1.0-3-gabcdef0',
      commit,
      build_date: '2026-01-02T03:04:05Z',
      go_version: `node${process.versions.node}`,
      modified: true,
    });
  });

  it('lets BUILD_VERSION, BUILD_COMMIT and BUILD_DATE win over the stamp', () => {
    fs.writeFileSync(stampPath, JSON.stringify(stamp));
    const info = resolveBuildInfo(
      { version: 'v9.9.9', commit: 'b'.repeat(40), date: '2030-12-31T23:59:59Z' },
      stampPath,
    );
    expect(info).toMatchObject({
      version: 'v9.9.9',
      commit: 'b'.repeat(40),
      build_date: '2030-12-31T23:59:59Z',
      modified: true,
    });
  });

  it('falls back to devel, unknown and a timestamp in the contract format without a stamp', () => {
    const info = resolveBuildInfo({}, path.join(directory, 'missing.json'));
    expect(info.version).toBe('devel');
    expect(info.commit).toBe('unknown');
    expect(info.build_date).toMatch(TIMESTAMP);
    expect(info.modified).toBe(false);
  });

  it('ignores an unreadable stamp instead of failing start-up', () => {
    fs.writeFileSync(stampPath, '{ not json');
    expect(resolveBuildInfo({}, stampPath).version).toBe('devel');
  });

  it('reads the stamp beside the entry point, where `npm run build` writes it (dist/build-info.json beside dist/main.js)', () => {
    expect(path.basename(BUILD_STAMP_PATH)).toBe('build-info.json');
    expect(fs.existsSync(path.join(path.dirname(BUILD_STAMP_PATH), 'main.ts'))).toBe(true);
  });

  it('reports the Node toolchain as go_version (node<major>.<minor>.<patch>)', () => {
    expect(resolveBuildInfo({}, stampPath).go_version).toMatch(/^node\d+\.\d+\.\d+$/);
  });
});
