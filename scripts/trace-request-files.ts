// Lists the source files whose code runs for one streamed chat turn (docs/architecture.md "How a
// chat request flows"): a gateway wired to the provider_a fake serves a warm-up turn, then V8
// precise coverage records exactly the functions the second turn executes. Run:
//   node -r ./scripts/register-ts.cjs scripts/trace-request-files.ts
import * as fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { startGateway } from '../test/support/create-test-app';
import { FakeProviderA } from '../test/support/fake-provider-a';
import { providerASettings, textReply } from '../test/support/provider-a-fixtures';

const SRC = path.resolve(__dirname, '..', 'src') + path.sep;

async function turn(url: string): Promise<void> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-5.6-sol', stream: true, messages: [{ role: 'user', content: 'hello' }] }),
  });
  await response.text();
}

async function main(): Promise<void> {
  const fake = await FakeProviderA.start();
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'trace-home-'));
  const gateway = await startGateway({ GATEWAY_PROVIDERS: 'provider_a', ...providerASettings(fake, home) });
  const session = new Session();
  session.connect();
  try {
    fake.enqueue(textReply('warm-up'), textReply('hello there'));
    await turn(gateway.url);
    await session.post('Profiler.enable');
    await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
    await turn(gateway.url);
    // Let the response's 'close'/'finish' listeners and the final log line run.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const { result } = await session.post('Profiler.takePreciseCoverage');
    const files = result
      .map((script) => ({
        file: script.url.replace(/^file:\/\//, ''),
        ran: script.functions.some((fn) => fn.ranges[0].count > 0),
      }))
      .filter(({ file, ran }) => ran && file.startsWith(SRC))
      .map(({ file }) => path.relative(SRC, file))
      .sort();
    process.stdout.write(`${files.join('\n')}\n${files.length} source files ran for one streamed chat turn\n`);
  } finally {
    session.disconnect();
    await gateway.close();
    await fake.close();
    fs.rmSync(home, { recursive: true, force: true });
  }
}

void main();
