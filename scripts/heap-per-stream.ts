// What one open stream costs the gateway's heap, by kind (docs/performance.md "Per open stream").
// The gateway runs as the rig runs it (`node dist/main.js`, its own process, `npm run build` first)
// against the in-process provider_a fake; after a warm-up of short and streamed turns, N streams
// are opened and held after their first content chunk (the fake keeps them open), and the gateway
// writes a heap snapshot (`--heapsnapshot-signal`) before and with all N open. Objects new in the
// second (V8 keeps node ids across snapshots of one process) are grouped by kind (node type and
// constructor or function name) and divided by N: only the gateway's own objects are counted, not
// the client's or the fake's. Run:
//   npm run build && node -r ./scripts/register-ts.cjs scripts/heap-per-stream.ts [streams] [ws|sse] [counts]
// With `counts`, the gateway also counts the async resources it creates (scripts/async-counts.cjs):
// promises, timers and sockets per opened stream, garbage included.
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnGateway } from '../test/support/child-gateway';
import { heapSnapshotOf } from './heap-snapshot-signal';
import { FakeProviderA } from '../test/support/fake-provider-a';
import { created, providerASettings, textDelta, textReply } from '../test/support/provider-a-fixtures';

interface HeapSnapshotJson {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
}

/** The kinds whose instances carry a name worth telling apart; the rest are grouped by type only. */
const NAMED_TYPES = new Set(['object', 'closure', 'native']);

interface Kind {
  count: number;
  bytes: number;
}

/** Objects of `after` that `before` did not have, by `type:name`. */
function newObjectsByKind(before: HeapSnapshotJson, after: HeapSnapshotJson): Map<string, Kind> {
  const fieldsOf = (snapshot: HeapSnapshotJson) => {
    const fields = snapshot.snapshot.meta.node_fields;
    return {
      width: fields.length,
      type: fields.indexOf('type'),
      name: fields.indexOf('name'),
      id: fields.indexOf('id'),
      size: fields.indexOf('self_size'),
    };
  };
  const old = fieldsOf(before);
  const known = new Set<number>();
  for (let index = 0; index < before.nodes.length; index += old.width) known.add(before.nodes[index + old.id]);
  const at = fieldsOf(after);
  const types = after.snapshot.meta.node_types[0];
  const kinds = new Map<string, Kind>();
  for (let index = 0; index < after.nodes.length; index += at.width) {
    if (known.has(after.nodes[index + at.id])) continue;
    const type = types[after.nodes[index + at.type]];
    const key = NAMED_TYPES.has(type) ? `${type}:${after.strings[after.nodes[index + at.name]]}` : type;
    const kind = kinds.get(key) ?? { count: 0, bytes: 0 };
    kind.count += 1;
    kind.bytes += after.nodes[index + at.size];
    kinds.set(key, kind);
  }
  return kinds;
}

/**
 * Sends one chat turn; resolves once it ended (or, for a held stream, once its first content chunk
 * arrived). Plain `node:http` without `Accept-Encoding`, as the rig's client sends it: with one, the
 * gateway's compression middleware would wrap each response and be counted too.
 */
function chat(url: string, text: string, stream: boolean, held = false): Promise<void> {
  const body = JSON.stringify({ model: 'gpt-5.6-sol', stream, messages: [{ role: 'user', content: text }] });
  return new Promise((resolve, reject) => {
    const request = http.request(`${url}/v1/chat/completions`, { method: 'POST', agent: false }, (response) => {
      let seen = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        seen += chunk;
        if (held && seen.includes('"content":"held"')) resolve();
      });
      response.on('end', () => resolve());
      response.on('error', reject);
    });
    request.on('error', reject);
    request.setHeader('content-type', 'application/json');
    request.end(body);
  });
}

/** Signals the gateway to write a snapshot and reads it once the file stops growing. */
async function snapshot(pid: number, directory: string): Promise<HeapSnapshotJson> {
  return JSON.parse(fs.readFileSync(await heapSnapshotOf(pid, directory), 'utf8')) as HeapSnapshotJson;
}

async function main(): Promise<void> {
  const streams = Number(process.argv[2] ?? 300);
  const transport = (process.argv[3] ?? 'ws') as 'ws' | 'sse';
  const counting = process.argv[4] === 'counts';
  const fake = await FakeProviderA.start();
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'heap-home-'));
  const snapshots = fs.mkdtempSync(path.join(os.tmpdir(), 'heap-snapshots-'));
  const countsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'async-counts-'));
  const gateway = await spawnGateway(
    {
      NODE_ENV: 'production',
      GATEWAY_PROVIDERS: 'provider_a',
      PRIMARY_AGENT_QUEUE_ENABLED: 'false',
      ...providerASettings(fake, home, { transport }),
      ...(counting ? { ASYNC_COUNTS_DIR: countsDir } : {}),
    },
    [],
    undefined,
    {
      built: true,
      nodeFlags: [
        '--heapsnapshot-signal=SIGUSR2',
        `--diagnostic-dir=${snapshots}`,
        ...(counting ? ['--require', path.join(__dirname, 'async-counts.cjs')] : []),
      ],
    },
  );
  const pid = gateway.process.pid!;
  try {
    // Warm-up, as the rig's: every code path of a turn has run and its lazy state exists.
    for (let index = 0; index < 50; index++) {
      fake.enqueue(textReply('warm'));
      await chat(gateway.url, `warm-up ${index}`, index % 2 === 0);
    }
    const before = await snapshot(pid, snapshots);
    for (let index = 0; index < streams; index++)
      fake.enqueue({ frames: [created(), textDelta('held')], holdOpen: true });
    // Distinct chats, so no turn waits for another's kept connection.
    await Promise.all(Array.from({ length: streams }, (_, index) => chat(gateway.url, `hold ${index}`, true, true)));
    const kinds = newObjectsByKind(before, await snapshot(pid, snapshots));
    const rows = [...kinds.entries()]
      .map(([key, kind]) => ({ key, count: kind.count / streams, bytes: kind.bytes / streams }))
      .sort((a, b) => b.bytes - a.bytes);
    // Code compiled while the streams opened, and single objects that happened to be made then (a
    // native histogram, a parser buffer), are new in the second snapshot without growing with the
    // streams: listed, but not counted in the per-stream total.
    const oneOff = (row: { key: string; count: number }) => row.key === 'code' || row.count < 0.05;
    const total = rows
      .filter((row) => !oneOff(row))
      .reduce((sum, row) => ({ count: sum.count + row.count, bytes: sum.bytes + row.bytes }), {
        count: 0,
        bytes: 0,
      });
    process.stdout.write(
      `${streams} open ${transport} streams: ${Math.round(total.bytes)} bytes in ${total.count.toFixed(1)} heap objects per stream (gateway process only)\n`,
    );
    process.stdout.write('   bytes  objects  kind\n');
    for (const row of rows.filter((entry) => entry.count >= 0.5 || entry.bytes >= 64))
      process.stdout.write(
        `${row.bytes.toFixed(0).padStart(8)} ${row.count.toFixed(2).padStart(8)}  ${row.key}${oneOff(row) ? '  (not per stream)' : ''}\n`,
      );
    if (counting) {
      // counts-1 was written with the first snapshot, counts-2 with the second.
      const read = (name: string) =>
        JSON.parse(fs.readFileSync(path.join(countsDir, name), 'utf8')) as Record<string, number>;
      const [first, second] = [read('counts-1.json'), read('counts-2.json')];
      process.stdout.write('async resources created per opened stream (garbage included)\n');
      for (const type of Object.keys(second).sort()) {
        const perStream = (second[type] - (first[type] ?? 0)) / streams;
        if (perStream >= 0.05) process.stdout.write(`${perStream.toFixed(2).padStart(8)}  ${type}\n`);
      }
    }
  } finally {
    await gateway.close();
    await fake.close();
    fs.rmSync(home, { recursive: true, force: true });
    fs.rmSync(snapshots, { recursive: true, force: true });
    fs.rmSync(countsDir, { recursive: true, force: true });
  }
}

void main();
