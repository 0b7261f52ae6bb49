// Counts the heap objects one open stream holds, by kind (docs/performance.md "Per open stream"):
// a gateway wired to the provider_a fake serves a warm-up turn, then N streams are opened and held
// after their first content chunk (the fake keeps them open); heap snapshots before and with all N
// open are diffed by (node type, constructor or function name) and divided by N. The client runs
// in the same process, so its objects are counted too (the same for any gateway version). Run:
//   node --expose-gc -r ./scripts/register-ts.cjs scripts/heap-per-stream.ts [streams] [ws|sse]
import * as fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { startGateway } from '../test/support/create-test-app';
import { FakeProviderA } from '../test/support/fake-provider-a';
import { created, providerASettings, textDelta, textReply } from '../test/support/provider-a-fixtures';

type Counts = Map<string, number>;

interface HeapSnapshotJson {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
}

/** Objects by `type:name`, from a heap snapshot taken after a full GC. */
async function countObjects(session: Session): Promise<Counts> {
  (globalThis as { gc?: () => void }).gc?.();
  const chunks: string[] = [];
  const onChunk = (message: { params: { chunk: string } }) => chunks.push(message.params.chunk);
  session.on('HeapProfiler.addHeapSnapshotChunk', onChunk);
  await session.post('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
  session.off('HeapProfiler.addHeapSnapshotChunk', onChunk);
  const snapshot = JSON.parse(chunks.join('')) as HeapSnapshotJson;
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0];
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const counts: Counts = new Map();
  for (let index = 0; index < snapshot.nodes.length; index += fields.length) {
    const type = types[snapshot.nodes[index + typeAt]];
    if (type !== 'object' && type !== 'closure') continue;
    const key = `${type}:${snapshot.strings[snapshot.nodes[index + nameAt]]}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** Opens one stream and resolves once its first content chunk arrived; the body stays unread after that. */
async function openStream(url: string, abort: AbortSignal): Promise<void> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-5.6-sol', stream: true, messages: [{ role: 'user', content: 'hold' }] }),
    signal: abort,
  });
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  let seen = '';
  while (!seen.includes('"content"')) seen += new TextDecoder().decode((await reader.read()).value);
}

async function main(): Promise<void> {
  const streams = Number(process.argv[2] ?? 200);
  const transport = (process.argv[3] ?? 'ws') as 'ws' | 'sse';
  const fake = await FakeProviderA.start();
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'heap-home-'));
  const gateway = await startGateway({
    GATEWAY_PROVIDERS: 'provider_a',
    LOG_LEVEL: 'warn',
    ...providerASettings(fake, home, { transport }),
  });
  const session = new Session();
  session.connect();
  const abort = new AbortController();
  try {
    fake.enqueue(textReply('warm-up'));
    await (
      await fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-5.6-sol', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      })
    ).text();
    const before = await countObjects(session);
    for (let index = 0; index < streams; index++)
      fake.enqueue({ frames: [created(), textDelta('held')], holdOpen: true });
    await Promise.all(Array.from({ length: streams }, () => openStream(gateway.url, abort.signal)));
    const open = await countObjects(session);
    const rows = [...open.entries()]
      .map(([key, count]) => ({ key, perStream: (count - (before.get(key) ?? 0)) / streams }))
      .filter((row) => row.perStream >= 0.5)
      .sort((a, b) => b.perStream - a.perStream);
    const total = rows.reduce((sum, row) => sum + row.perStream, 0);
    process.stdout.write(
      `${streams} open ${transport} streams: ${total.toFixed(1)} objects and closures per stream (kinds with >= 0.5)\n`,
    );
    for (const row of rows) process.stdout.write(`${row.perStream.toFixed(2).padStart(8)}  ${row.key}\n`);
  } finally {
    abort.abort();
    session.disconnect();
    gateway.app.getHttpServer().closeAllConnections();
    await gateway.close();
    await fake.close();
    fs.rmSync(home, { recursive: true, force: true });
  }
}

void main();
