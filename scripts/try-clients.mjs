// Runs the real agent clients with the configuration docs/clients.md shows, taken from the page
// itself, against `npm run demo` (the gateway in front of the fake upstreams), so the page is
// checked as written. Not part of `npm test`: the clients are large downloads, and some of them
// phone home, so this refuses to run unless the only network is loopback. As root:
//
//   npm install --prefix /tmp/clients @continuedev/cli@1.5.47 cline@3.0.65 \
//     opencode-ai@1.18.33 @mariozechner/pi-coding-agent@0.73.1
//   unshare -n sh -c 'ip link set lo up; node scripts/try-clients.mjs /tmp/clients'
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const BIN = path.join(process.argv[2] ?? '', 'node_modules', '.bin');
const BASE = 'http://127.0.0.1:8088';
const PROMPT = 'What is in README.md? Read it.';
// The demo's fake models call the first offered tool, then answer with this once a result is back.
const FINAL_ANSWER = /The tool result arrived/;

const outside = Object.values(os.networkInterfaces())
  .flat()
  .filter((address) => !address.internal);
if (outside.length > 0 || !fs.existsSync(BIN)) {
  console.error(
    'usage: inside a loopback-only network namespace, node scripts/try-clients.mjs <dir with the clients installed>',
  );
  process.exit(2);
}

/** The first fenced block of `language` under the `## heading` of docs/clients.md that starts with `title`. */
function docBlock(title, language) {
  const page = fs.readFileSync(path.join(ROOT, 'docs', 'clients.md'), 'utf8');
  const section = page.split(/^## /m).find((part) => part.startsWith(title));
  const block = section && new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(section);
  if (!block) throw new Error(`docs/clients.md has no ${language} block under "## ${title}"`);
  return block[1];
}

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'try-clients-'));
const work = path.join(home, 'work');
fs.mkdirSync(work);
fs.writeFileSync(path.join(work, 'README.md'), '# Demo project\n');
const write = (file, text) => {
  fs.mkdirSync(path.dirname(path.join(home, file)), { recursive: true });
  fs.writeFileSync(path.join(home, file), text);
};
const cnConfig = docBlock('Continue CLI', 'yaml');
write('.config/opencode/opencode.json', docBlock('opencode', 'json'));
write('.continue/config.yaml', cnConfig);
write('.continue/.env', 'GATEWAY_KEY=local\n');
write('.pi/agent/models.json', docBlock('pi', 'json'));
write('.continue/gpt.yaml', cnConfig.replace(/model: sol$/m, 'model: gpt-5.6-sol'));

const env = {
  ...process.env,
  HOME: home,
  GATEWAY_KEY: 'local',
  NO_PROXY: '127.0.0.1,localhost',
  HTTPS_PROXY: 'http://127.0.0.1:9',
  HTTP_PROXY: 'http://127.0.0.1:9',
  ALL_PROXY: 'http://127.0.0.1:9',
};
const run = (command, args) =>
  spawnSync(path.join(BIN, command), args, { cwd: work, env, encoding: 'utf8', timeout: 120_000 });
const clineAuth = docBlock('Cline CLI', 'sh').split('\n')[0].replace('"$GATEWAY_KEY"', 'local').split(' ').slice(1);

const checks = [
  ['opencode run (sol)', () => run('opencode', ['run', '-m', 'gateway/sol', PROMPT]), FINAL_ANSWER],
  ['cn -p (sol)', () => run('cn', ['--config', path.join(home, '.continue/config.yaml'), '-p', PROMPT]), FINAL_ANSWER],
  [
    'cn -p (gpt-5.6-sol: the documented quirk)',
    () => run('cn', ['--config', path.join(home, '.continue/gpt.yaml'), '-p', PROMPT]),
    /404 no such route/,
  ],
  ['cline auth + cline (sol)', () => (run('cline', clineAuth), run('cline', ['--json', PROMPT])), FINAL_ANSWER],
  ...['sol', 'gemini-2.5-pro', 'sonnet'].map((model) => [
    `pi -p (${model})`,
    () => run('pi', ['--offline', '--no-session', '--provider', 'gateway', '--model', model, '-p', PROMPT]),
    FINAL_ANSWER,
  ]),
];

const demo = spawn(process.execPath, ['-r', './scripts/register-ts.cjs', 'scripts/demo.ts'], {
  cwd: ROOT,
  env: { ...process.env, GATEWAY_PORT: '8088' },
  stdio: 'ignore',
});
let failed = 0;
try {
  for (
    let i = 0;
    i < 60 &&
    !(await fetch(`${BASE}/health/live`).then(
      (r) => r.ok,
      () => false,
    ));
    i++
  )
    await new Promise((r) => setTimeout(r, 500));
  for (const [name, check, expected] of checks) {
    const result = check();
    const ok = expected.test(`${result.stdout}${result.stderr}`);
    if (!ok) failed++;
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${ok ? '' : `\n${result.stdout}${result.stderr}`.slice(-2000)}`);
  }
} finally {
  demo.kill('SIGTERM');
  // Cline leaves a hub daemon behind (`cline --cline-hub-daemon --cwd <work>`): end the ones
  // started for this run's work directory, by pid.
  const daemons = [];
  for (const pid of fs.readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (cmdline.includes('--cline-hub-daemon') && cmdline.includes(work)) daemons.push(Number(pid));
  }
  for (const pid of daemons) process.kill(pid, 'SIGTERM');
  // It writes into HOME while it shuts down: wait for it before removing HOME.
  for (let i = 0; i < 50 && daemons.some((pid) => fs.existsSync(`/proc/${pid}`)); i++)
    await new Promise((r) => setTimeout(r, 100));
  fs.rmSync(home, { recursive: true, force: true });
}
process.exit(failed === 0 ? 0 : 1);
