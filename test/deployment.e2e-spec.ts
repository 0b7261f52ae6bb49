import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { parseDuration } from '../src/config/setting-parsers';
import { loadConfig } from '../src/config/app-config';
import { REPO_ROOT } from './support/child-gateway';
import { startGateway, TestGateway } from './support/create-test-app';

/**
 * The image and manifests of docker/ (issue item 11, design.md §11). Docker and Kubernetes do not
 * run here, so the files are parsed and checked field by field; the HEALTHCHECK command is run
 * for real against a gateway.
 */
const DOCKER = path.join(REPO_ROOT, 'docker');
const K8S = path.join(DOCKER, 'k8s');
const LOGIN_DIRECTORIES = ['.codex', '.gemini', '.claude'];

// Manifests are free-form YAML; the tests walk them like plain objects.
type Manifest = Record<string, any>;

function loadManifests(): Manifest[] {
  return fs
    .readdirSync(K8S)
    .filter((name) => name.endsWith('.yaml') && name !== 'kustomization.yaml')
    .flatMap((name) =>
      parseAllDocuments(fs.readFileSync(path.join(K8S, name), 'utf8')).map((document) => {
        expect(document.errors).toEqual([]);
        return { ...(document.toJS() as Manifest), __file: name };
      }),
    );
}

interface Instruction {
  readonly keyword: string;
  readonly args: string;
  readonly stage: number;
}

/** Dockerfile instructions with line continuations joined and comments dropped; stage = index of the FROM. */
function parseDockerfile(text: string): Instruction[] {
  const logical: string[] = [];
  let current = '';
  for (const line of text.split('\n')) {
    if (/^\s*#/.test(line) && current === '') continue;
    if (/^\s*#/.test(line)) continue;
    if (line.trimEnd().endsWith('\\')) {
      current += line.trimEnd().slice(0, -1) + ' ';
      continue;
    }
    current += line;
    if (current.trim() !== '') logical.push(current.trim());
    current = '';
  }
  let stage = -1;
  return logical.map((line) => {
    const [keyword, ...rest] = line.split(/\s+/);
    if (keyword.toUpperCase() === 'FROM') stage++;
    return { keyword: keyword.toUpperCase(), args: rest.join(' '), stage };
  });
}

// The Dockerfile, manifest and compose checks below read the files' text: they are lint (what the
// files say), not proof that an image builds or starts — there is no Docker engine here. Only the
// HEALTHCHECK command is also run, against a live gateway.
describe('lint: docker/Dockerfile', () => {
  const instructions = parseDockerfile(fs.readFileSync(path.join(DOCKER, 'Dockerfile'), 'utf8'));
  const froms = instructions.filter((instruction) => instruction.keyword === 'FROM');
  const finalStage = froms.length - 1;
  const inStage = (stage: number, keyword: string) => instructions.filter((instruction) => instruction.stage === stage && instruction.keyword === keyword);

  it('is multi-stage: a build stage with npm ci + npm run build, a runtime with npm ci --omit=dev', () => {
    expect(froms.length).toBeGreaterThanOrEqual(2);
    expect(froms[0].args).toMatch(/^node:\S+ AS build$/i);
    expect(froms[finalStage].args).toMatch(/^node:\S+-slim AS runtime$/i);
    const buildRuns = inStage(0, 'RUN').map((instruction) => instruction.args);
    expect(buildRuns.some((run) => /^npm ci\b/.test(run) && !run.includes('--omit=dev'))).toBe(true);
    expect(buildRuns).toContain('npm run build');
    const runtimeRuns = inStage(finalStage, 'RUN').map((instruction) => instruction.args);
    expect(runtimeRuns.some((run) => /^npm ci --omit=dev\b/.test(run))).toBe(true);
    expect(inStage(finalStage, 'COPY').some((instruction) => instruction.args === '--from=build /app/dist ./dist')).toBe(true);
  });

  it('takes BUILD_VERSION, BUILD_COMMIT and BUILD_DATE as build args and passes them on as ENV', () => {
    for (const name of ['BUILD_VERSION', 'BUILD_COMMIT', 'BUILD_DATE']) {
      expect(inStage(0, 'ARG').some((instruction) => instruction.args === name)).toBe(true);
      expect(inStage(finalStage, 'ARG').some((instruction) => instruction.args === name)).toBe(true);
      expect(inStage(finalStage, 'ENV').some((instruction) => instruction.args.includes(`${name}=\${${name}}`))).toBe(true);
    }
  });

  it('listens on 0.0.0.0:8088 as a non-root user and starts node dist/main.js', () => {
    const env = inStage(finalStage, 'ENV').map((instruction) => instruction.args).join(' ');
    expect(env).toContain('GATEWAY_HOST=0.0.0.0');
    expect(env).toContain('GATEWAY_PORT=8088');
    // The young-generation cap that keeps resident memory of many open streams down (docs/performance.md).
    expect(env).toContain('NODE_OPTIONS=--max-semi-space-size=4');
    const users = inStage(finalStage, 'USER');
    expect(users).toHaveLength(1);
    expect(users[0].args).not.toMatch(/^(root|0)(:|$)/);
    expect(inStage(finalStage, 'EXPOSE').map((instruction) => instruction.args)).toEqual(['8088']);
    expect(inStage(finalStage, 'CMD').map((instruction) => JSON.parse(instruction.args))).toEqual([['node', 'dist/main.js']]);
    // USER comes after every RUN that needs root.
    const lastRun = instructions.map((instruction, index) => (instruction.keyword === 'RUN' ? index : -1)).reduce((a, b) => Math.max(a, b));
    expect(instructions.indexOf(users[0])).toBeGreaterThan(lastRun);
  });

  describe('HEALTHCHECK', () => {
    const healthcheck = inStage(finalStage, 'HEALTHCHECK');
    const command = JSON.parse(healthcheck[0]?.args.replace(/^.*?CMD\s+/, '') ?? '[]') as string[];
    let gateway: TestGateway;

    beforeAll(async () => {
      gateway = await startGateway({ GATEWAY_BEARER_SECRET: 'image-secret-0123' });
    });

    afterAll(() => gateway.close());

    function runProbe(port: string): Promise<number | null> {
      return new Promise((resolve) => {
        const child = spawn(command[0] === 'node' ? process.execPath : command[0], command.slice(1), { env: { PATH: process.env.PATH, GATEWAY_PORT: port }, stdio: 'ignore' });
        child.on('exit', (code) => resolve(code));
      });
    }

    it('probes /health/live with node (no curl in slim images)', () => {
      expect(healthcheck).toHaveLength(1);
      expect(command[0]).toBe('node');
      expect(command.join(' ')).toContain('/health/live');
      expect(command.join(' ')).not.toMatch(/curl|wget/);
    });

    it('exits 0 against a live gateway (no bearer needed) and 1 when nothing listens', async () => {
      const port = new URL(gateway.url).port;
      expect(await runProbe(port)).toBe(0);
      expect(await runProbe('1')).toBe(1);
    });
  });

  it('has a .dockerignore beside it that keeps node_modules, dist and .git out of the context', () => {
    const ignored = fs.readFileSync(path.join(DOCKER, 'Dockerfile.dockerignore'), 'utf8').split('\n').map((line) => line.trim());
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', '.git']));
    expect(ignored).not.toContain('src');
    expect(ignored).not.toContain('scripts');
  });
});

describe('lint: docker/k8s manifests', () => {
  const manifests = loadManifests();
  const byKind = (kind: string) => manifests.filter((manifest) => manifest.kind === kind);
  const deployment = byKind('Deployment')[0];
  const pod = deployment?.spec?.template?.spec;
  const container = pod?.containers?.[0];
  const configMaps = byKind('ConfigMap');

  /** The value the container sees for `name`: env wins over envFrom ConfigMaps. */
  function containerSetting(name: string): string | undefined {
    const direct = (container.env ?? []).find((entry: Manifest) => entry.name === name);
    if (direct && 'value' in direct) return String(direct.value);
    for (const source of container.envFrom ?? []) {
      const map = configMaps.find((candidate) => candidate.metadata.name === source.configMapRef?.name);
      if (map?.data?.[name] !== undefined) return String(map.data[name]);
    }
    return undefined;
  }

  it('parses and has a Deployment, Service, Secret, ConfigMap and PersistentVolumeClaim', () => {
    for (const kind of ['Deployment', 'Service', 'Secret', 'ConfigMap', 'PersistentVolumeClaim']) {
      expect(byKind(kind)).toHaveLength(1);
    }
  });

  it('runs exactly one replica, replaced with strategy Recreate (never two processes owning the keys)', () => {
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.strategy).toEqual({ type: 'Recreate' });
    expect(containerSetting('STRUCTURED_REPLICAS') ?? '1').toBe('1');
  });

  it('probes readiness on /health/ready and liveness on /health/live on the container port', () => {
    const port = container.ports.find((entry: Manifest) => entry.containerPort === 8088);
    expect(port).toBeDefined();
    for (const [probe, route] of [['readinessProbe', '/health/ready'], ['livenessProbe', '/health/live']] as const) {
      expect(container[probe].httpGet.path).toBe(route);
      expect([port.name, 8088]).toContain(container[probe].httpGet.port);
    }
    expect(containerSetting('GATEWAY_PORT')).toBe('8088');
    expect(containerSetting('GATEWAY_HOST')).toBe('0.0.0.0');
  });

  it('gives terminationGracePeriodSeconds above GATEWAY_DRAIN_TIMEOUT (plus the 3 s abort grace)', () => {
    const drain = containerSetting('GATEWAY_DRAIN_TIMEOUT');
    expect(drain).toBeDefined();
    const drainSeconds = parseDuration(drain!) / 1000;
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(drainSeconds + 3);
  });

  it('reads the bearer from a Secret that holds it', () => {
    const entry = container.env.find((candidate: Manifest) => candidate.name === 'GATEWAY_BEARER_SECRET');
    const reference = entry.valueFrom.secretKeyRef;
    const secret = byKind('Secret')[0];
    expect(secret.metadata.name).toBe(reference.name);
    expect(Object.keys(secret.stringData ?? secret.data ?? {})).toContain(reference.key);
    expect(entry.value).toBeUndefined();
  });

  it('mounts the Codex, Gemini and Claude login directories under HOME, writable, from the claim', () => {
    const home = containerSetting('HOME');
    expect(home).toBe('/home/node');
    for (const directory of LOGIN_DIRECTORIES) {
      const mount = container.volumeMounts.find((candidate: Manifest) => candidate.mountPath === `${home}/${directory}`);
      expect(mount).toBeDefined();
      expect(mount.readOnly).not.toBe(true);
      const volume = pod.volumes.find((candidate: Manifest) => candidate.name === mount.name);
      expect(volume.persistentVolumeClaim.claimName).toBe(byKind('PersistentVolumeClaim')[0].metadata.name);
    }
  });

  it('runs as a non-root user without privilege escalation', () => {
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(pod.securityContext.runAsUser).not.toBe(0);
    expect(container.securityContext.allowPrivilegeEscalation).toBe(false);
  });

  it('exposes the pods through a Service that selects them on the http port', () => {
    const service = byKind('Service')[0];
    const labels = deployment.spec.template.metadata.labels;
    for (const [key, value] of Object.entries(service.spec.selector)) expect(labels[key]).toBe(value);
    expect(deployment.spec.selector.matchLabels).toEqual(service.spec.selector);
    expect(['http', 8088]).toContain(service.spec.ports[0].targetPort);
  });

  it('holds only settings the gateway accepts', () => {
    const env: Record<string, string> = { HOME: '/home/node' };
    for (const map of configMaps) Object.assign(env, map.data);
    for (const entry of container.env) if ('value' in entry) env[entry.name] = String(entry.value);
    expect(() => loadConfig(env)).not.toThrow();
  });

  it('lists every manifest in kustomization.yaml', () => {
    const kustomization = parseAllDocuments(fs.readFileSync(path.join(K8S, 'kustomization.yaml'), 'utf8'))[0].toJS() as Manifest;
    const files = [...new Set(manifests.map((manifest) => manifest.__file as string))].sort();
    expect([...kustomization.resources].sort()).toEqual(files);
  });
});

describe('lint: docker/compose.yaml', () => {
  const compose = parseAllDocuments(fs.readFileSync(path.join(DOCKER, 'compose.yaml'), 'utf8'))[0].toJS() as Manifest;
  const service = compose.services.gateway;

  it('builds docker/Dockerfile from the repository root with the BUILD_* args', () => {
    expect(path.resolve(DOCKER, service.build.context)).toBe(REPO_ROOT);
    expect(service.build.dockerfile).toBe('docker/Dockerfile');
    expect(Object.keys(service.build.args)).toEqual(expect.arrayContaining(['BUILD_VERSION', 'BUILD_COMMIT', 'BUILD_DATE']));
  });

  it('mounts the three CLI login directories and stops with a grace above the drain timeout', () => {
    for (const directory of LOGIN_DIRECTORIES) {
      expect(service.volumes.some((volume: string) => volume.endsWith(`:/home/node/${directory}`))).toBe(true);
    }
    expect(parseDuration(service.stop_grace_period)).toBeGreaterThan(parseDuration(service.environment.GATEWAY_DRAIN_TIMEOUT));
    expect(service.ports.some((port: string) => port.endsWith(':8088'))).toBe(true);
  });
});
