// What one chat turn allocates in the gateway's heap, by package and by function
// (docs/performance.md "Per open stream"): the gateway runs as the rig runs
// it (`node dist/main.js`, its own process, `npm run build` first) against the in-process provider_a
// fake, with the inspector on a loopback port. After a warm-up, V8's sampling heap profiler records
// every sampled allocation of N sequential turns, including objects already collected again (the
// young-generation garbage that sets how often V8 scavenges and how much it promotes), and the
// totals are divided by N. Run:
//   npm run build && node -r ./scripts/register-ts.cjs scripts/alloc-per-turn.ts [turns] [short|stream]
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import WebSocket from 'ws';
import { spawnGateway } from '../test/support/child-gateway';
import { FakeProviderA } from '../test/support/fake-provider-a';
import { completed, created, providerASettings, textDelta, textReply } from '../test/support/provider-a-fixtures';

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

/** The package (node_modules), source folder (dist/…), Node core or V8 an allocation site belongs to. */
function ownerOf(url: string): string {
  if (url.includes('node_modules/')) return url.split('node_modules/')[1].split('/')[0];
  if (url.includes('/dist/')) return `dist/${path.dirname(url.split('/dist/')[1])}`;
  if (url.startsWith('node:')) return 'node core';
  return url === '' ? 'V8 built-ins and natives' : url;
}

/** One turn over one kept-alive connection, without `Accept-Encoding`, as the rig's client sends it. */
function chat(url: string, stream: boolean): Promise<void> {
  const body = JSON.stringify({ model: 'gpt-5.6-sol', stream, messages: [{ role: 'user', content: 'Say hi.' }] });
  return new Promise((resolve, reject) => {
    const request = http.request(`${url}/v1/chat/completions`, { method: 'POST', agent: keepAlive }, (response) => {
      response.resume();
      response.on('end', () => resolve());
      response.on('error', reject);
    });
    request.on('error', reject);
    request.setHeader('content-type', 'application/json');
    request.end(body);
  });
}

const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** A minimal DevTools-protocol client over the inspector's WebSocket. */
async function inspector(
  url: string,
): Promise<{ call: (method: string, params?: object) => Promise<unknown>; close(): void }> {
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  let id = 0;
  const pending = new Map<number, (result: unknown) => void>();
  socket.on('message', (data: WebSocket.RawData) => {
    const message = JSON.parse(String(data)) as { id?: number; result?: unknown };
    if (message.id !== undefined) pending.get(message.id)?.(message.result);
  });
  return {
    call: (method, params = {}) =>
      new Promise((resolve) => {
        pending.set(++id, resolve);
        socket.send(JSON.stringify({ id, method, params }));
      }),
    close: () => socket.close(),
  };
}

async function main(): Promise<void> {
  const turns = Number(process.argv[2] ?? 1000);
  const stream = process.argv[3] === 'stream';
  const fake = await FakeProviderA.start();
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'alloc-home-'));
  const gateway = await spawnGateway(
    {
      NODE_ENV: 'production',
      GATEWAY_PROVIDERS: 'provider_a',
      PRIMARY_AGENT_QUEUE_ENABLED: 'false',
      ...providerASettings(fake, home, { transport: 'ws' }),
    },
    [],
    undefined,
    { built: true, nodeFlags: ['--inspect=127.0.0.1:0'] },
  );
  // Node prints the inspector's address on stderr before the gateway starts listening.
  const debuggerUrl = /ws:\/\/127\.0\.0\.1:\d+\/[\w-]+/.exec(gateway.stderr())?.[0];
  if (!debuggerUrl) throw new Error(`no inspector address on the gateway's stderr: ${gateway.stderr()}`);
  // One chat, one kept upstream connection: the fake keeps it open between turns, as the backend does.
  fake.keepConnectionsOpen();
  const answer = () =>
    stream
      ? { frames: [created(), ...Array.from({ length: 20 }, (_, index) => textDelta(`w${index} `)), completed()] }
      : textReply('Hello from the bench.');
  const session = await inspector(debuggerUrl);
  try {
    for (let index = 0; index < 300; index++) {
      fake.enqueue(answer());
      await chat(gateway.url, stream);
    }
    await session.call('HeapProfiler.enable');
    await session.call('HeapProfiler.startSampling', {
      samplingInterval: 512,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    for (let index = 0; index < turns; index++) {
      fake.enqueue(answer());
      await chat(gateway.url, stream);
    }
    const { profile } = (await session.call('HeapProfiler.stopSampling')) as { profile: { head: SamplingNode } };
    const byOwner = new Map<string, number>();
    const bySite = new Map<string, number>();
    let total = 0;
    const walk = (node: SamplingNode, caller = ''): void => {
      const { functionName, url, lineNumber } = node.callFrame;
      const where = `${functionName || '(anonymous)'} ${url.replace(/.*\/(dist|node_modules)\//, '$1/')}:${lineNumber + 1}`;
      // A built-in (Map, sort, JSON.parse…) is named with the function that called it.
      const site = url === '' && caller !== '' ? `${where} ← ${caller}` : where;
      total += node.selfSize;
      byOwner.set(ownerOf(url), (byOwner.get(ownerOf(url)) ?? 0) + node.selfSize);
      bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
      for (const child of node.children) walk(child, where);
    };
    walk(profile.head);
    const rows = (map: Map<string, number>, count: number) =>
      [...map]
        .sort((a, b) => b[1] - a[1])
        .slice(0, count)
        .map(([key, bytes]) => `${String(Math.round(bytes / turns)).padStart(8)}  ${key}`)
        .join('\n');
    process.stdout.write(
      `${Math.round(total / turns)} bytes allocated per ${stream ? 'streamed 20-delta' : 'short non-streaming'} turn (gateway process, sampled)\n` +
        `   bytes  by owner\n${rows(byOwner, 15)}\n   bytes  by allocation site\n${rows(bySite, 30)}\n`,
    );
  } finally {
    session.close();
    await gateway.close();
    await fake.close();
    fs.rmSync(home, { recursive: true, force: true });
  }
}

void main();
