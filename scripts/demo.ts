/**
 * `npm run demo`: the real gateway wired to the three fake upstreams, so a newcomer can try
 * streaming, tool calls and structured inference with curl or an SDK without any CLI login.
 * The fakes speak the real wire formats (Responses over WebSocket, Code Assist SSE, a fake
 * `claude` printing stream-json); see test/support/. Stop with Ctrl-C.
 */
import * as fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import pino from 'pino';
import { createGatewayApp } from '../src/app.factory';
import { loadConfig } from '../src/config/app-config';
import { StructuredAllowlist } from '../src/structured/structured-allowlist';
import { FakeProviderA } from '../test/support/fake-provider-a';
import { FakeCodeAssist } from '../test/support/fake-provider-b';
import { providerASettings } from '../test/support/provider-a-fixtures';
import { providerBSettings } from '../test/support/provider-b-fixtures';
import { providerCSettings } from '../test/support/provider-c-fixtures';
import { providerAResponder, providerBResponder } from './demo-responders';

async function main(): Promise<void> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-demo-'));
  const fakeA = await FakeProviderA.start();
  fakeA.respondWith(providerAResponder);
  const fakeB = await FakeCodeAssist.start();
  fakeB.respondWith(providerBResponder);
  const port = process.env.GATEWAY_PORT ?? '8088';
  const config = loadConfig(
    {
      PATH: process.env.PATH,
      HOME: home,
      GATEWAY_HOST: '127.0.0.1',
      GATEWAY_PORT: port,
      STRUCTURED_INFERENCE_ENABLED: 'true',
      ...providerASettings(fakeA, home),
      ...providerBSettings(fakeB, home, { project: 'demo-project' }),
      ...providerCSettings(path.join(home, 'claude'), [{ demo: true }]),
    },
    process.argv.slice(2),
  );
  const logFile = path.join(home, 'gateway.log');
  const app = await createGatewayApp(config, { logStream: pino.destination({ dest: logFile, sync: false }) });
  await app.listen(config.server.port, config.server.host);
  // The bound port, not the configured one: GATEWAY_PORT=0 (a free port, as the docs test uses) works too.
  const { port: boundPort } = app.getHttpServer().address() as AddressInfo;
  const base = `http://${config.server.host}:${boundPort}`;
  // The structured example names a model of the allowlist this gateway built from its settings.
  const structuredModel = app.get(StructuredAllowlist).ids[0];
  process.stdout.write(instructions(base, logFile, structuredModel));

  const stop = () => {
    (async () => {
      await app.close();
      await Promise.all([fakeA.close(), fakeB.close()]);
      fs.rmSync(home, { recursive: true, force: true });
      process.exit(0);
    })().catch((error: Error) => {
      process.stderr.write(`demo failed to stop: ${error?.message ?? error}\n`);
      process.exit(1);
    });
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

function instructions(base: string, logFile: string, structuredModel: string): string {
  const tool = `{"type":"function","function":{"name":"read_file","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}}`;
  return `
LLM gateway demo — the real gateway in front of fake upstreams (no login needed)
  gateway   ${base}
  logs      ${logFile}
  models    gpt-5.6-sol (provider_a), gemini-2.5-pro (provider_b), claude-fable-5 (provider_c)

List the models:
  curl -s ${base}/v1/models

Stream an answer (try each model):
  curl -N ${base}/v1/chat/completions -H 'content-type: application/json' \\
    -d '{"model":"gpt-5.6-sol","stream":true,"messages":[{"role":"user","content":"Hello"}]}'

A tool call (the model asks the client to run read_file):
  curl -s ${base}/v1/chat/completions -H 'content-type: application/json' \\
    -d '{"model":"claude-fable-5","messages":[{"role":"user","content":"What is in README.md?"}],"tools":[${tool}]}'

The continuation (send the tool result back; the model answers):
  curl -s ${base}/v1/chat/completions -H 'content-type: application/json' \\
    -d '{"model":"gemini-2.5-pro","messages":[{"role":"user","content":"What is in README.md?"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\\"path\\":\\"README.md\\"}"}}]},{"role":"tool","tool_call_id":"call_1","content":"# Demo"}],"tools":[${tool}]}'

Structured inference (JSON validated against your schema):
  curl -s ${base}/v1/structured/inference -H 'content-type: application/json' \\
    -d '{"request_id":"demo-1","idempotency_key":"demo-key-1","model":"${structuredModel}","input":"Revenue grew 12%.","schema":{"type":"object","additionalProperties":false,"required":["headline","growth_percent"],"properties":{"headline":{"type":"string"},"growth_percent":{"type":"integer"}}}}'

With the openai SDK (from this directory):
  node -e 'const OpenAI = require("openai").default; const client = new OpenAI({ baseURL: "${base}/v1", apiKey: "demo" });
    (async () => { const stream = await client.chat.completions.create({ model: "gpt-5.6-sol", stream: true, messages: [{ role: "user", content: "Hi" }] });
    for await (const chunk of stream) process.stdout.write(chunk.choices[0]?.delta?.content ?? ""); console.log(); })();'

The requests so far, in the Prometheus metrics:
  curl -s ${base}/metrics | grep gateway_chat_api_requests_total

Press Ctrl-C to stop.
`;
}

main().catch((error) => {
  process.stderr.write(`demo failed: ${error?.message ?? error}\n`);
  process.exit(1);
});
