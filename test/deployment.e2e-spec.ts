import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Instruction, JSONInstruction } from 'dockerfile-ast';
import { DockerfileParser } from 'dockerfile-ast';
import { parse, parseAllDocuments } from 'yaml';
import { loadConfig } from '../src/config/app-config';
import { parseDuration } from '../src/config/setting-parsers';
import { SEMI_SPACE_ARGUMENT } from '../src/common/lifecycle/young-generation';
import { CLAUDE_CODE } from '../scripts/oracle/oracle-clis';
import { REPO_ROOT } from './support/child-gateway';
import { claimedVersionProblem } from './support/oracle-pins';
import { useGateway } from './support/create-test-app';
import type { Manifest } from './support/real-tools';
import { kustomize, render } from './support/real-tools';

/**
 * The image and manifests of docker/ (docs/deployment.md, docs/design/decisions.md §11). There is no Docker engine here, so
 * the Dockerfile is read with a real parser (dockerfile-ast) and its runtime stage's contents are
 * checked instruction by instruction; the HEALTHCHECK command is run against a live gateway. The
 * Kubernetes manifests are rendered by the real kustomize (`kubectl kustomize`, what
 * `kubectl apply -k` runs), every path the docs tell you to apply, and the rendered objects are
 * checked.
 */
const DOCKER = path.join(REPO_ROOT, 'docker');
const K8S = path.join(DOCKER, 'k8s');
const LOGIN_DIRECTORIES = ['.codex', '.gemini', '.claude'];
/** The vendor CLIs that are test oracles only (oracles/package.json): never in the image by default. */
const VENDOR_CLIS = ['@anthropic-ai/claude-code', '@openai/codex', '@google/gemini-cli'];
/** Memory per PROVIDER_C_MAX_PROCESSES: one `claude -p` peaked at 231 MB, rounded up. */
const CLAUDE_PROCESS_MIB = 256;
/** The gateway's own memory without provider_c children (docs/deployment.md "Memory"). */
const GATEWAY_MIB = 512;
/** A value the hand-made Secret would hold; the manifests never carry one. */
const HAND_MADE_SECRET = 'a'.repeat(64);

const readText = (file: string) => fs.readFileSync(file, 'utf8');

describe('docker/Dockerfile (parsed by dockerfile-ast)', () => {
  const dockerfile = DockerfileParser.parse(readText(path.join(DOCKER, 'Dockerfile')));
  const instructions = dockerfile.getInstructions();
  const froms = dockerfile.getFROMs();
  const runtimeStart = froms[froms.length - 1].getRange().start.line;
  const buildStage = instructions.filter((instruction) => instruction.getRange().start.line < runtimeStart);
  const runtimeStage = instructions.filter((instruction) => instruction.getRange().start.line >= runtimeStart);
  const inStage = (stage: Instruction[], keyword: string) =>
    stage.filter((instruction) => instruction.getKeyword() === keyword);
  const text = (instruction: Instruction) => instruction.getArgumentsContent() ?? '';
  const json = (instruction: Instruction) =>
    (instruction as JSONInstruction).getJSONStrings().map((entry) => entry.getJSONValue());
  const runtimeEnv = new Map(
    inStage(runtimeStage, 'ENV').flatMap((instruction) =>
      (instruction as any).getProperties().map((property: any) => [property.getName(), property.getValue()]),
    ),
  );

  it('is two stages: build (npm ci + npm run build) and a slim runtime (npm ci --omit=dev + the compiled dist)', () => {
    expect(froms.map((from) => [from.getImageName(), from.getBuildStage()])).toEqual([
      ['node', 'build'],
      ['node', 'runtime'],
    ]);
    expect(text(froms[1])).toMatch(/-slim AS runtime$/);
    const buildRuns = inStage(buildStage, 'RUN').map(text);
    expect(buildRuns.some((run) => /^npm ci\b/.test(run) && !run.includes('--omit=dev'))).toBe(true);
    expect(buildRuns).toContain('npm run build');
    expect(
      inStage(runtimeStage, 'RUN')
        .map(text)
        .some((run) => /^npm ci --omit=dev\b/.test(run)),
    ).toBe(true);
    const copies = inStage(runtimeStage, 'COPY').map((copy) => ({
      flags: (copy as any).getFlags().map((flag: any) => `${flag.getName()}=${flag.getValue()}`),
      args: text(copy),
    }));
    expect(copies).toContainEqual({ flags: ['from=build'], args: '/app/dist ./dist' });
  });

  it("gives both stages' npm ci the project's .npmrc (the install-script policy), and the context keeps it", () => {
    // npm reads the project's .npmrc from the directory it runs in: each stage must copy it into
    // its WORKDIR before its `npm ci`, or strict-allow-scripts stops nothing there
    // (docs/deployment.md "Install scripts").
    for (const stage of [buildStage, runtimeStage]) {
      const install = inStage(stage, 'RUN').find((run) => /^npm ci\b/.test(text(run)))!;
      const copiedBefore = inStage(stage, 'COPY')
        .filter((copy) => copy.getRange().start.line < install.getRange().start.line)
        .filter((copy) => (copy as any).getFlags().length === 0)
        .flatMap((copy) => {
          const args = text(copy).split(/\s+/);
          return args.at(-1) === './' ? args.slice(0, -1) : [];
        });
      expect(inStage(stage, 'WORKDIR').map(text)).toEqual(['/app']);
      expect(copiedBefore).toEqual(expect.arrayContaining(['package.json', 'package-lock.json', '.npmrc']));
    }
    // Docker's ignore patterns are Go's filepath.Match plus `**`: there `*` matches a leading dot too.
    const matches = (pattern: string, file: string) =>
      new RegExp(
        `^${pattern
          .replace(/^\//, '')
          .replace(/[.+^${}()|\\]/g, '\\$&')
          .replace(/\*\*\/?|\*|\?/g, (wild) => ({ '**/': '(.*/)?', '**': '.*', '*': '[^/]*' })[wild] ?? '[^/]')}$`,
      ).test(file);
    const ignoredNpmrc = readText(path.join(DOCKER, 'Dockerfile.dockerignore'))
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#') && !line.startsWith('!'))
      .filter((pattern) => matches(pattern, '.npmrc'));
    expect(ignoredNpmrc).toEqual([]);
  });

  it('takes BUILD_VERSION, BUILD_COMMIT and BUILD_DATE as build args and passes them on as ENV', () => {
    for (const name of ['BUILD_VERSION', 'BUILD_COMMIT', 'BUILD_DATE']) {
      expect(inStage(buildStage, 'ARG').map(text)).toContain(name);
      expect(inStage(runtimeStage, 'ARG').map(text)).toContain(name);
      expect(runtimeEnv.get(name)).toBe(`\${${name}}`);
    }
  });

  it('runs tini as PID 1 (ENTRYPOINT), installed from Debian in the runtime stage, with node dist/main.js under the young-generation bound as its child', () => {
    const entrypoints = inStage(runtimeStage, 'ENTRYPOINT');
    expect(entrypoints).toHaveLength(1);
    expect(json(entrypoints[0])).toEqual(['/usr/bin/tini', '--']);
    const installsTini = inStage(runtimeStage, 'RUN')
      .map(text)
      .filter((run) => /apt-get install\b.*\btini\b/.test(run));
    // One RUN: the install and the list cleanup in one layer (continuation lines read as spaces).
    expect(installsTini).toEqual([
      'apt-get update   && apt-get install -y --no-install-recommends tini   && rm -rf /var/lib/apt/lists/*',
    ]);
    expect(inStage(runtimeStage, 'CMD').map(json)).toEqual([['node', SEMI_SPACE_ARGUMENT, 'dist/main.js']]);
  });

  it('runs as the non-root user node, after every RUN that needs root, listening on 0.0.0.0:8088', () => {
    const users = inStage(runtimeStage, 'USER');
    expect(users.map(text)).toEqual(['node']);
    const lastRun = Math.max(...inStage(runtimeStage, 'RUN').map((run) => run.getRange().start.line));
    expect(users[0].getRange().start.line).toBeGreaterThan(lastRun);
    expect(runtimeEnv.get('GATEWAY_HOST')).toBe('0.0.0.0');
    expect(runtimeEnv.get('GATEWAY_PORT')).toBe('8088');
    // JSON lines for a log collector even when run with a terminal (docs/configuration.md LOG_FORMAT).
    expect(runtimeEnv.get('LOG_FORMAT')).toBe('json');
    // The young generation's bound is on node's command line (CMD), not a second one in its options
    // (docs/performance.md "Young generation").
    expect(runtimeEnv.has('NODE_OPTIONS')).toBe(false);
    expect(inStage(runtimeStage, 'EXPOSE').map(text)).toEqual(['8088']);
  });

  it('makes the login directories under /home/node for node alone (mode 0700): the logins in them hold refresh tokens', () => {
    const makesLoginDirectories = inStage(runtimeStage, 'RUN')
      .map(text)
      .filter((run) => /\bmkdir\b/.test(run) && run.includes('/home/node/.'));
    expect(makesLoginDirectories).toEqual([
      'mkdir -p -m 0700 /home/node/.codex /home/node/.gemini /home/node/.claude && chown -R node:node /home/node',
    ]);
  });

  it('ships no vendor CLI unless CLAUDE_CODE_PACKAGE is given: neither stage installs one from the lock, and oracles/ stays out of the context', () => {
    const rootPackage = JSON.parse(readText(path.join(REPO_ROOT, 'package.json')));
    const lock = JSON.parse(readText(path.join(REPO_ROOT, 'package-lock.json')));
    for (const cli of VENDOR_CLIS) {
      expect({ cli, declared: { ...rootPackage.dependencies, ...rootPackage.devDependencies }[cli] }).toEqual({
        cli,
        declared: undefined,
      });
      expect({ cli, locked: lock.packages[`node_modules/${cli}`] }).toEqual({ cli, locked: undefined });
    }
    // The only other install in the runtime stage is the opt-in claude, empty by default.
    const optIn = inStage(runtimeStage, 'ARG')
      .map(text)
      .find((arg) => arg.startsWith('CLAUDE_CODE_PACKAGE'));
    expect(optIn).toBe('CLAUDE_CODE_PACKAGE=""');
    const installs = inStage(runtimeStage, 'RUN')
      .map(text)
      .filter((run) => /npm (install|i|ci)\b/.test(run));
    expect(installs.map((run) => run.replace(/\s+/g, ' '))).toEqual([
      'npm ci --omit=dev --omit=optional --no-audit --no-fund && npm cache clean --force',
      expect.stringMatching(/^if \[ -n "\$CLAUDE_CODE_PACKAGE" \]; then npm install -g .*"\$CLAUDE_CODE_PACKAGE"/),
    ]);
    const ignored = readText(path.join(DOCKER, 'Dockerfile.dockerignore'))
      .split('\n')
      .map((line) => line.trim());
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', '.git', 'oracles']));
    expect(ignored).not.toContain('src');
    expect(ignored).not.toContain('scripts');
  });

  describe('HEALTHCHECK', () => {
    const healthcheck = inStage(runtimeStage, 'HEALTHCHECK');
    const command = JSON.parse(text(healthcheck[0]).replace(/^CMD\s+/, '')) as string[];
    const gateway = useGateway(() => ({ GATEWAY_BEARER_SECRET: 'image-secret-0123' }));

    function runProbe(port: string): Promise<number | null> {
      return new Promise((resolve) => {
        const child = spawn(command[0] === 'node' ? process.execPath : command[0], command.slice(1), {
          env: { PATH: process.env.PATH, GATEWAY_PORT: port },
          stdio: 'ignore',
        });
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
});

/** Every `kubectl apply -k <path>` the docs, the README and the manifests' own comments give. */
function documentedKustomizations(): Map<string, string[]> {
  const walk = (directory: string): string[] =>
    fs
      .readdirSync(directory, { withFileTypes: true })
      .flatMap((entry) =>
        entry.isDirectory() ? walk(path.join(directory, entry.name)) : [path.join(directory, entry.name)],
      );
  const sources = [
    path.join(REPO_ROOT, 'README.md'),
    ...walk(path.join(REPO_ROOT, 'docs')).filter((file) => file.endsWith('.md')),
    ...walk(DOCKER).filter((file) => /\.(ya?ml|md)$|Dockerfile$/.test(file)),
  ];
  const found = new Map<string, string[]>();
  for (const file of sources) {
    for (const match of readText(file).matchAll(/kubectl apply -k (\S+)/g)) {
      const target = match[1].replace(/[`'".,;)]+$/, '');
      found.set(target, [...(found.get(target) ?? []), path.relative(REPO_ROOT, file)]);
    }
  }
  return found;
}

/** Every directory under docker/k8s holding a kustomization.yaml. */
function kustomizationDirectories(): string[] {
  const walk = (directory: string): string[] =>
    fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
      if (!entry.isDirectory()) return [];
      const child = path.join(directory, entry.name);
      return [
        ...(fs.existsSync(path.join(child, 'kustomization.yaml')) ? [path.relative(REPO_ROOT, child)] : []),
        ...walk(child),
      ];
    });
  return walk(K8S).sort();
}

describe('docker/k8s rendered by the real kustomize', () => {
  const documented = documentedKustomizations();

  it('every documented `kubectl apply -k` path renders, and every kustomization is documented', () => {
    expect([...documented.keys()].sort()).toEqual(kustomizationDirectories());
    const failures = [...documented].flatMap(([target, where]) => {
      const result = kustomize(path.join(REPO_ROOT, target));
      return result.status === 0 ? [] : [`${target} (named in ${where.join(', ')}): ${result.stderr.trim()}`];
    });
    expect(failures).toEqual([]);
  });

  it('kustomize itself refuses a parent directory as a resource (so an overlay must not reach above its folder)', () => {
    // The old layout in miniature: a kustomization, and an overlay inside it that lists `..`.
    // kustomize must fail the way `kubectl apply -k docker/k8s/monitoring` did, which shows the
    // render above would have caught it.
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kustomize-cycle-'));
    try {
      fs.writeFileSync(
        path.join(scratch, 'kustomization.yaml'),
        'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n',
      );
      fs.mkdirSync(path.join(scratch, 'monitoring'));
      fs.writeFileSync(
        path.join(scratch, 'monitoring', 'kustomization.yaml'),
        'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ..\n',
      );
      const result = kustomize(path.join(scratch, 'monitoring'));
      expect(result.status).not.toBe(0);
      expect(result.stderr).toMatch(
        /cycle detected: candidate root '.*kustomize-cycle-\w+' contains visited root '.*kustomize-cycle-\w+\/monitoring'/,
      );
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  });

  describe.each(kustomizationDirectories())('%s', (directory) => {
    const manifests = render(path.join(REPO_ROOT, directory));
    const byKind = (kind: string) => manifests.filter((manifest) => manifest.kind === kind);
    const deployment = byKind('Deployment')[0];
    const pod = deployment.spec.template.spec;
    const container = pod.containers[0];
    // Named llm-gateway-config-<hash of its data> by kustomize's configMapGenerator.
    const configMap = byKind('ConfigMap').find(
      (map) => map.metadata.name === container.envFrom?.[0]?.configMapRef?.name,
    )!;

    /** The container's settings as the process sees them, with the hand-made Secret in place. */
    function containerEnvironment(): Record<string, string> {
      const env: Record<string, string> = {};
      for (const source of container.envFrom ?? []) {
        const map = byKind('ConfigMap').find((candidate) => candidate.metadata.name === source.configMapRef?.name);
        Object.assign(env, map?.data);
      }
      for (const entry of container.env ?? []) {
        if ('value' in entry) env[entry.name] = String(entry.value);
        else if (entry.valueFrom?.secretKeyRef) env[entry.name] = HAND_MADE_SECRET;
      }
      return env;
    }
    const config = loadConfig(containerEnvironment());

    it('holds only settings the gateway accepts, binds 0.0.0.0:8088 and needs the hand-made bearer Secret', () => {
      expect(config.server).toMatchObject({ host: '0.0.0.0', port: 8088, bearerSecret: HAND_MADE_SECRET });
      expect(config.logFormat).toBe('json');
      const reference = container.env.find((entry: Manifest) => entry.name === 'GATEWAY_BEARER_SECRET').valueFrom
        .secretKeyRef;
      expect(reference).toEqual({ name: 'llm-gateway-bearer', key: 'GATEWAY_BEARER_SECRET' });
      // Without the Secret the gateway would refuse to start on 0.0.0.0: it is required, not optional.
      expect(reference.optional).toBeUndefined();
      expect(() => loadConfig({ ...containerEnvironment(), GATEWAY_BEARER_SECRET: '' })).toThrow(
        /GATEWAY_HOST.*not loopback/,
      );
    });

    it("starts node with the young generation's bound, as the image does", () => {
      expect(container.command).toBeUndefined();
      expect(container.args).toEqual(['node', SEMI_SPACE_ARGUMENT, 'dist/main.js']);
    });

    it('renders no Secret, so `kubectl apply -k` never overwrites the one created by hand', () => {
      expect(byKind('Secret')).toEqual([]);
    });

    it('carries no prometheus.io scrape annotation: /metrics needs the bearer, which annotation-driven scrapes never send', () => {
      const annotated = manifests.flatMap((manifest) =>
        [manifest.metadata?.annotations, manifest.spec?.template?.metadata?.annotations].flatMap((annotations) =>
          Object.keys(annotations ?? {})
            .filter((key) => key.startsWith('prometheus.io/'))
            .map((key) => `${manifest.kind}/${manifest.metadata.name}: ${key}`),
        ),
      );
      expect(annotated).toEqual([]);
      // What such a scrape would meet: the gateway the manifests start has a bearer, so /metrics answers 401 without it.
      expect(config.server.bearerSecret).toBe(HAND_MADE_SECRET);
    });

    it('enables provider_c only together with the image built with the claude CLI', () => {
      const claudeImage = /-claude$/.test(container.image);
      expect({ image: container.image, providerC: config.enabledProviders.includes('provider_c') }).toEqual({
        image: container.image,
        providerC: claudeImage,
      });
    });

    it('asks for memory for the enabled families: 512Mi + 256Mi per PROVIDER_C_MAX_PROCESSES when provider_c is on', () => {
      const mebibytes = (quantity: string) => {
        const match = /^(\d+)(Mi|Gi)$/.exec(quantity);
        if (!match) throw new Error(`unexpected memory quantity ${quantity}`);
        return Number(match[1]) * (match[2] === 'Gi' ? 1024 : 1);
      };
      const children = config.enabledProviders.includes('provider_c') ? config.providerC.maxProcesses : 0;
      expect(mebibytes(container.resources.limits.memory)).toBeGreaterThanOrEqual(
        GATEWAY_MIB + children * CLAUDE_PROCESS_MIB,
      );
      expect(mebibytes(container.resources.requests.memory)).toBeLessThanOrEqual(
        mebibytes(container.resources.limits.memory),
      );
      if (children > 0) expect(configMap.data.PROVIDER_C_MAX_PROCESSES).toBe(String(children));
    });

    it('runs exactly one replica, replaced with strategy Recreate (never two processes owning the keys)', () => {
      expect(deployment.spec.replicas).toBe(1);
      expect(deployment.spec.strategy).toEqual({ type: 'Recreate' });
      expect(config.structured.replicas).toBe(1);
    });

    it('probes readiness and liveness so that one slow answer does not take the only replica out', () => {
      const port = container.ports.find((entry: Manifest) => entry.containerPort === 8088);
      for (const [probe, route] of [
        ['readinessProbe', '/health/ready'],
        ['livenessProbe', '/health/live'],
      ] as const) {
        expect(container[probe].httpGet.path).toBe(route);
        expect([port.name, 8088]).toContain(container[probe].httpGet.port);
        expect(container[probe].failureThreshold).toBeGreaterThan(1);
        expect(container[probe].timeoutSeconds).toBeGreaterThanOrEqual(3);
        expect(container[probe].timeoutSeconds).toBeLessThan(container[probe].periodSeconds);
      }
    });

    it('drains for as long as the longest turn, and terminationGracePeriodSeconds covers the drain plus the 6 s of closing', () => {
      const longestTurnMs = Math.max(
        config.providerA.timeoutMs,
        config.providerB.timeoutMs,
        config.providerC.timeoutMs,
      );
      expect(config.server.drainTimeoutMs).toBeGreaterThanOrEqual(longestTurnMs);
      expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(config.server.drainTimeoutMs / 1000 + 6);
    });

    it('mounts the Codex, Gemini and Claude login directories under HOME, writable, from the claim', () => {
      expect(container.env.find((entry: Manifest) => entry.name === 'HOME').value).toBe('/home/node');
      for (const directory of LOGIN_DIRECTORIES) {
        const mount = container.volumeMounts.find(
          (candidate: Manifest) => candidate.mountPath === `/home/node/${directory}`,
        );
        expect(mount.readOnly).not.toBe(true);
        const volume = pod.volumes.find((candidate: Manifest) => candidate.name === mount.name);
        expect(volume.persistentVolumeClaim.claimName).toBe(byKind('PersistentVolumeClaim')[0].metadata.name);
      }
    });

    it('runs as a non-root user without privilege escalation, behind a Service that selects it on the http port', () => {
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      expect(pod.securityContext.runAsUser).not.toBe(0);
      expect(container.securityContext.allowPrivilegeEscalation).toBe(false);
      const service = byKind('Service')[0];
      for (const [key, value] of Object.entries(service.spec.selector))
        expect(deployment.spec.template.metadata.labels[key]).toBe(value);
      expect(['http', 8088]).toContain(service.spec.ports[0].targetPort);
    });
  });
});

describe('docker/k8s: a changed setting rolls the gateway, which reads its settings only at start', () => {
  /**
   * A copy of docker/k8s in which one setting is edited where it is set, as an operator would:
   * `NAME: value` or `NAME=value` in the one file under `level` that sets it.
   */
  function editedCopy(level: string, name: string, value: string, next: string): string {
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'k8s-setting-'));
    fs.cpSync(K8S, path.join(scratch, 'k8s'), { recursive: true });
    const setting = new RegExp(`^(\\s*-?\\s*${name}(?:: "?|=))${value}\\b`, 'm');
    const files = filesUnder(path.join(scratch, 'k8s', level))
      .map((file) => path.join(scratch, 'k8s', level, file))
      .filter((file) => setting.test(readText(file)));
    expect(files).toHaveLength(1);
    fs.writeFileSync(files[0], readText(files[0]).replace(setting, `$1${next}`));
    return scratch;
  }

  /** The Deployment's pod template and the settings its container reads from ConfigMaps. */
  function rendered(directory: string) {
    const manifests = render(directory);
    const template = manifests.find((manifest) => manifest.kind === 'Deployment')!.spec.template;
    const settings: Record<string, string> = {};
    for (const source of template.spec.containers[0].envFrom ?? []) {
      const map = manifests.find(
        (manifest) => manifest.kind === 'ConfigMap' && manifest.metadata.name === source.configMapRef?.name,
      );
      Object.assign(settings, map?.data);
    }
    return { template, settings };
  }

  it.each([
    ['base', 'base', 'LOG_LEVEL', 'info', 'debug'],
    ['provider-c', 'base', 'LOG_LEVEL', 'info', 'debug'],
    ['monitoring', 'base', 'LOG_LEVEL', 'info', 'debug'],
    ['provider-c', 'provider-c', 'PROVIDER_C_MAX_PROCESSES', '4', '2'],
  ])(
    "docker/k8s/%s: editing %s's %s changes the pod template (a new ConfigMap name), so `kubectl apply -k` replaces the pod",
    (overlay, level, name, value, next) => {
      const before = rendered(path.join(K8S, overlay));
      expect(before.settings[name]).toBe(value);
      const scratch = editedCopy(level, name, value, next);
      try {
        const after = rendered(path.join(scratch, 'k8s', overlay));
        expect(after.settings).toEqual({ ...before.settings, [name]: next });
        expect(after.template).not.toEqual(before.template);
      } finally {
        fs.rmSync(scratch, { recursive: true, force: true });
      }
    },
  );
});

describe('docker/compose.yaml (and the provider_c switch docker/compose.provider-c.yaml)', () => {
  const compose = parse(readText(path.join(DOCKER, 'compose.yaml'))) as Manifest;
  const withClaude = parse(readText(path.join(DOCKER, 'compose.provider-c.yaml'))) as Manifest;
  const service = compose.services.gateway;

  it('builds docker/Dockerfile from the repository root with the BUILD_* args', () => {
    expect(path.resolve(DOCKER, service.build.context)).toBe(REPO_ROOT);
    expect(service.build.dockerfile).toBe('docker/Dockerfile');
    expect(Object.keys(service.build.args)).toEqual(
      expect.arrayContaining(['BUILD_VERSION', 'BUILD_COMMIT', 'BUILD_DATE']),
    );
  });

  it("requires a bearer secret, leaves provider_c off by default, and relies on the image's tini (no init: true)", () => {
    expect(service.environment.GATEWAY_BEARER_SECRET).toMatch(/^\$\{GATEWAY_BEARER_SECRET:\?/);
    expect(service.environment.GATEWAY_PROVIDERS).toBe('${GATEWAY_PROVIDERS:-provider_a,provider_b}');
    expect(service.init).toBeUndefined();
  });

  it('switches provider_c on with its image, its process cap and their memory in one override file', () => {
    const override = withClaude.services.gateway;
    const [name, version] = String(override.build.args.CLAUDE_CODE_PACKAGE).split(/(?<=.)@/);
    expect(name).toBe(CLAUDE_CODE);
    expect(claimedVersionProblem(CLAUDE_CODE, version, 'CLAUDE_CODE_PACKAGE', 'docker/compose.provider-c.yaml')).toBe(
      '',
    );
    expect(override.environment.GATEWAY_PROVIDERS).toContain('provider_c');
    const processes = Number(override.environment.PROVIDER_C_MAX_PROCESSES);
    expect(processes).toBeGreaterThan(0);
    expect(parseInt(override.mem_limit, 10)).toBeGreaterThanOrEqual(GATEWAY_MIB + processes * CLAUDE_PROCESS_MIB);
    expect(parseInt(service.mem_limit, 10)).toBeGreaterThanOrEqual(GATEWAY_MIB);
  });

  it('mounts the three CLI login directories and stops with a grace above the drain timeout plus the 6 s of closing', () => {
    for (const directory of LOGIN_DIRECTORIES) {
      expect(service.volumes.some((volume: string) => volume.endsWith(`:/home/node/${directory}`))).toBe(true);
    }
    expect(parseDuration(service.stop_grace_period)).toBeGreaterThan(
      parseDuration(service.environment.GATEWAY_DRAIN_TIMEOUT) + 6000,
    );
    expect(service.ports).toEqual(['127.0.0.1:8088:8088']);
  });
});

/** The fenced blocks of docs/deployment.md, each with its language and the `## ` section it sits in. */
function deploymentDocBlocks(): Array<{ lang: string; code: string; section: string }> {
  const blocks: Array<{ lang: string; code: string; section: string }> = [];
  let section = '';
  const lines = readText(path.join(REPO_ROOT, 'docs', 'deployment.md')).split('\n');
  for (let index = 0; index < lines.length; index++) {
    if (lines[index].startsWith('## ')) section = lines[index].slice(3);
    const open = /^```(\w*)$/.exec(lines[index]);
    if (!open) continue;
    const end = lines.indexOf('```', index + 1);
    blocks.push({ lang: open[1], code: lines.slice(index + 1, end).join('\n') + '\n', section });
    index = end;
  }
  return blocks;
}

/** Every file under `directory`, as paths relative to it. */
const filesUnder = (directory: string): string[] =>
  fs
    .readdirSync(directory, { recursive: true, encoding: 'utf8' })
    .filter((name) => fs.statSync(path.join(directory, name)).isFile())
    .sort();

/**
 * A stand-in for kubectl with a cluster behind it: `rollout status` succeeds, `exec -i <target> --
 * <command>` runs the command here with HOME set to the pod's home (a scratch directory), and
 * anything else (`run`, `cp`, another pod) fails: the block may reach the claim only through the
 * gateway's own pod. Every call is written to $KUBECTL_CALLS.
 */
const STAND_IN_KUBECTL = `#!/bin/bash
printf '%s\\n' "$*" >> "$KUBECTL_CALLS"
case "$1" in
  rollout) [ "$2" = status ] && exit 0 ;;
  exec) if [ "$2" = -i ] && [ "$4" = -- ]; then shift 4; HOME="$POD_HOME" exec "$@"; fi ;;
esac
echo "stand-in kubectl: not something the login steps may run: kubectl $*" >&2
exit 2
`;

describe('docs/deployment.md: loading the logins into the claim', () => {
  const blocks = deploymentDocBlocks().filter(
    (block) => block.lang === 'sh' && block.code.includes('oauth_creds.json'),
  );
  const deployment = render(path.join(K8S, 'base')).find((manifest) => manifest.kind === 'Deployment')!;
  const container = deployment.spec.template.spec.containers[0];
  const containerHome = container.env.find((entry: Manifest) => entry.name === 'HOME').value as string;
  const claimVolume = deployment.spec.template.spec.volumes.find(
    (volume: Manifest) => volume.persistentVolumeClaim?.claimName,
  ).name;
  /** Where the claim is mounted in the gateway's container, relative to its HOME. */
  const claimMounts = container.volumeMounts
    .filter((mount: Manifest) => mount.name === claimVolume)
    .map((mount: Manifest) => path.relative(containerHome, mount.mountPath));
  const CREDENTIALS = ['.codex/auth.json', '.gemini/oauth_creds.json', '.claude/.credentials.json'];

  it('is one block', () => {
    expect(blocks).toHaveLength(1);
  });

  it("copies the credential files only (never a CLI's transcripts or caches) through the gateway's own pod into the claim, whole and readable by the gateway's user alone: a second pod on the ReadWriteOnce claim cannot start on another node", async () => {
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'login-loading-'));
    try {
      const readerHome = path.join(scratch, 'reader');
      const podHome = path.join(scratch, 'pod');
      const bin = path.join(scratch, 'bin');
      const calls = path.join(scratch, 'calls');
      // A workstation after `codex login`, `gemini` and `claude`: the credentials, and what else the CLIs keep.
      for (const [file, content] of [
        ...CREDENTIALS.map((file) => [file, `{"fresh":"${file}"}`]),
        ['.codex/sessions/2026/rollout.jsonl', 'a session'],
        ['.claude/projects/repo/transcript.jsonl', 'a transcript'],
        ['.gemini/settings.json', '{}'],
      ]) {
        fs.mkdirSync(path.dirname(path.join(readerHome, file)), { recursive: true });
        fs.writeFileSync(path.join(readerHome, file), content);
      }
      // The pod: the claim's directories mounted, an old login in one of them.
      for (const mount of claimMounts) fs.mkdirSync(path.join(podHome, mount), { recursive: true });
      fs.writeFileSync(path.join(podHome, '.codex', 'auth.json'), '{"stale":true}');
      fs.mkdirSync(bin);
      fs.writeFileSync(path.join(bin, 'kubectl'), STAND_IN_KUBECTL, { mode: 0o755 });

      const ran = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn('bash', ['-euo', 'pipefail', '-c', blocks[0].code], {
          env: {
            PATH: `${bin}:${process.env.PATH}`,
            HOME: readerHome,
            POD_HOME: podHome,
            KUBECTL_CALLS: calls,
          },
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let stderr = '';
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.on('close', (code) => resolve({ code, stderr }));
      });
      expect(ran).toEqual({ code: 0, stderr: '' });

      // Only the gateway's own pod, found through its Deployment.
      const targets = readText(calls)
        .trim()
        .split('\n')
        // `rollout status <target>`, `exec -i <target> -- …`
        .map((call) => call.split(' ')[2].replace(/^deploy\//, 'deployment/'));
      expect([...new Set(targets)]).toEqual([`deployment/${deployment.metadata.name}`]);
      // The three credential files, each where the claim is mounted, with the workstation's content.
      expect(filesUnder(podHome)).toEqual([...CREDENTIALS].sort());
      for (const file of CREDENTIALS) {
        expect(claimMounts).toContain(path.dirname(file));
        expect(readText(path.join(podHome, file))).toBe(readText(path.join(readerHome, file)));
        expect(fs.statSync(path.join(podHome, file)).mode & 0o777).toBe(0o600);
      }
    } finally {
      fs.rmSync(scratch, { recursive: true, force: true });
    }
  });
});

/**
 * The directory a section of docs/deployment.md has you make beside docker/k8s/base: its yaml
 * blocks that open with `# <file>.yaml`, written under those names into a copy of docker/k8s and
 * rendered by the real kustomize, as `kubectl apply -k` would.
 */
function renderDocumentedDirectory(blocks: ReadonlyArray<{ code: string }>): Manifest[] {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'k8s-documented-'));
  try {
    fs.cpSync(K8S, path.join(scratch, 'k8s'), { recursive: true });
    const directory = path.join(scratch, 'k8s', 'documented');
    fs.mkdirSync(directory);
    for (const block of blocks) {
      const name = /^# ([\w.-]+\.yaml)\b/.exec(block.code)?.[1];
      if (name) fs.writeFileSync(path.join(directory, name), block.code);
    }
    return render(directory);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

describe('docs/deployment.md "Beyond one machine": the chat replicas and their routes', () => {
  const blocks = deploymentDocBlocks().filter(
    (block) => block.lang === 'yaml' && block.section.startsWith('Beyond one machine'),
  );
  const documents = blocks.flatMap((block) =>
    parseAllDocuments(block.code).map((document) => document.toJS() as Manifest),
  );
  // The chat replicas as applied: with the base, whose ConfigMap name kustomize hashes.
  const rendered = renderDocumentedDirectory(blocks);
  const baseDeployment = rendered.find((manifest) => manifest.kind === 'Deployment')!;
  const baseService = rendered.find(
    (manifest) => manifest.kind === 'Service' && manifest.metadata.name === 'llm-gateway',
  )!;
  const chat = rendered.find((manifest) => manifest.kind === 'StatefulSet');
  const pod = chat?.spec.template.spec;
  const container = pod?.containers[0];
  const configMapNamed = (name: string | undefined) =>
    rendered.find((manifest) => manifest.kind === 'ConfigMap' && manifest.metadata.name === name);

  /** The chat container's settings as the process sees them: the base ConfigMap, then its own env. */
  function chatConfig() {
    const env: Record<string, string> = {};
    for (const source of container.envFrom ?? []) Object.assign(env, configMapNamed(source.configMapRef?.name)?.data);
    for (const entry of container.env ?? []) {
      if ('value' in entry) env[entry.name] = String(entry.value);
      else if (entry.valueFrom?.secretKeyRef) env[entry.name] = HAND_MADE_SECRET;
    }
    return loadConfig(env);
  }

  it("renders with the base, the chat replicas reading the single replica's ConfigMap under its hashed name", () => {
    const reference = (workload: Manifest | undefined) =>
      workload?.spec.template.spec.containers[0].envFrom.map((source: Manifest) => source.configMapRef.name);
    expect(reference(chat)).toEqual(reference(baseDeployment));
    expect(configMapNamed(reference(chat)?.[0])?.data.GATEWAY_PROVIDERS).toEqual(expect.any(String));
    expect(reference(chat)?.[0]).toMatch(/^llm-gateway-config-\w+$/);
  });

  it('runs several chat replicas, rolled, structured off, with settings the gateway accepts and a login volume per pod', () => {
    expect(chat).toBeDefined();
    expect(chat!.spec.replicas).toBeGreaterThan(1);
    expect(chat!.spec.updateStrategy?.type ?? 'RollingUpdate').toBe('RollingUpdate');
    const config = chatConfig();
    expect(config.structured.enabled).toBe(false);
    expect(config.server).toMatchObject({ host: '0.0.0.0', port: 8088, bearerSecret: HAND_MADE_SECRET });
    expect(container.args).toEqual(baseDeployment.spec.template.spec.containers[0].args);
    // The same login directories as the single replica, each pod's from its own claim.
    const mounts = (manifest: Manifest) =>
      manifest.volumeMounts.map((mount: Manifest) => [mount.mountPath, mount.subPath]).sort();
    expect(mounts(container)).toEqual(mounts(baseDeployment.spec.template.spec.containers[0]));
    const claims = chat!.spec.volumeClaimTemplates.map((claim: Manifest) => claim.metadata.name);
    for (const mount of container.volumeMounts) expect(claims).toContain(mount.name);
  });

  it("routes chat to the chat replicas' Service and structured to the single replica's, which never selects a chat pod", () => {
    const labels = chat!.spec.template.metadata.labels;
    const selects = (service: Manifest) =>
      Object.entries(service.spec.selector).every(([key, value]) => labels[key] === value);
    const chatService = documents.find((manifest) => manifest.kind === 'Service' && selects(manifest));
    expect(chatService).toBeDefined();
    expect(selects(baseService)).toBe(false);
    const backends = (name: string) =>
      documents
        .find((manifest) => manifest.kind === 'Ingress' && manifest.metadata.name === name)!
        .spec.rules.flatMap((rule: Manifest) => rule.http.paths.map((entry: Manifest) => entry.backend.service.name));
    expect(new Set(backends('llm-gateway-chat'))).toEqual(new Set([chatService!.metadata.name]));
    expect(new Set(backends('llm-gateway-structured'))).toEqual(new Set([baseService.metadata.name]));
  });

  it('waits in preStop before SIGTERM, so the ingress stops routing to a pod before it closes its connections, and the grace covers that wait, the drain and the 6 s of closing', () => {
    const preStop = container.lifecycle?.preStop;
    // `sleep` in the image (its runtime stage is Debian's slim base), or the kubelet's own sleep action.
    const seconds =
      preStop?.sleep?.seconds ?? (preStop?.exec?.command[0] === 'sleep' && Number(preStop.exec.command[1]));
    expect(seconds).toBeGreaterThanOrEqual(5);
    if (preStop.exec) expect(readText(path.join(DOCKER, 'Dockerfile'))).toMatch(/^FROM \S+-bookworm-slim AS runtime$/m);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(seconds + chatConfig().server.drainTimeoutMs / 1000 + 6);
  });
});
