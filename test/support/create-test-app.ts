import type { NestExpressApplication } from '@nestjs/platform-express';
import * as fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { createGatewayApp } from '../../src/app.factory';
import { loadConfig } from '../../src/config/app-config';
import { LoginReport } from '../../src/accounts/login-report';
import { gatewayEnvironment } from './gateway-environment';
import { LogCapture } from './log-capture';

export interface TestGateway {
  readonly app: NestExpressApplication;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly logs: LogCapture;
  /** A private HOME for this gateway (CLI login files go under it). */
  readonly home: string;
  close(): Promise<void>;
}

/**
 * Boots the real gateway in-process on a random loopback port with the given settings (as
 * environment variables), capturing its logs. Tests never read the developer's real logins:
 * HOME points at a fresh temp directory.
 */
export async function startGateway(settings: Record<string, string> = {}, argv: string[] = []): Promise<TestGateway> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-test-home-'));
  const config = loadConfig(gatewayEnvironment(settings, home), argv);
  const logs = new LogCapture();
  const app = await createGatewayApp(config, { logStream: logs });
  await app.listen(0, '127.0.0.1');
  // The startup login report runs beside the boot (it never delays readiness); specs wait for its
  // first round so its lines never land inside the window a spec is reading the log of.
  await app.get(LoginReport, { strict: false }).settled();
  const { port } = app.getHttpServer().address() as AddressInfo;
  return {
    app,
    url: `http://127.0.0.1:${port}`,
    logs,
    home,
    close: async () => {
      // Keep-alive sockets left by aborted client requests would hold close() for seconds.
      app.getHttpServer().closeAllConnections();
      await app.close();
      fs.rmSync(home, { recursive: true, force: true });
    },
  };
}

/**
 * One in-process gateway for the enclosing `describe`: started in `beforeAll` with the settings
 * `settings()` returns (called there, so they may use a fake an earlier hook started) and closed
 * in `afterAll`. The returned object reads through to that gateway, so tests use it as a
 * `TestGateway`; touching it outside a hook or test fails with a message that says so.
 */
export function useGateway(settings: () => Record<string, string> = () => ({})): TestGateway {
  let started: TestGateway | undefined;
  beforeAll(async () => {
    started = await startGateway(settings());
  });
  afterAll(() => started?.close());
  const current = (): TestGateway => {
    if (!started) throw new Error('useGateway: the gateway is used outside a hook or test');
    return started;
  };
  return {
    get app() {
      return current().app;
    },
    get url() {
      return current().url;
    },
    get logs() {
      return current().logs;
    },
    get home() {
      return current().home;
    },
    close: () => current().close(),
  };
}
