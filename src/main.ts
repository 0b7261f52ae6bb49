import 'reflect-metadata';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Server } from 'node:http';
import { Logger } from 'nestjs-pino';
import { createGatewayApp } from './app.factory';
import { DrainService } from './common/lifecycle/drain.service';
import { ConfigError, HelpRequested, loadConfig, renderHelp } from './config/app-config';
import { processArguments, processEnvironment } from './config/process-env';

/** Grace for children and sockets to finish closing after the drain deadline aborted them. */
const ABORT_GRACE_MS = 3000;

async function bootstrap(): Promise<void> {
  let app: NestExpressApplication;
  try {
    const config = loadConfig(processEnvironment(), processArguments());
    app = await createGatewayApp(config);
    await app.listen(config.server.port, config.server.host);
    installDrainHandlers(app, config.server.drainTimeoutMs);
  } catch (error) {
    if (error instanceof HelpRequested) {
      process.stdout.write(renderHelp());
      process.exit(0);
    }
    const configError = findConfigError(error);
    if (configError) {
      process.stderr.write(`gateway: ${configError.message}\n`);
      process.exit(1);
    }
    process.stderr.write(`gateway: failed to start: ${(error as Error)?.message ?? String(error)}\n`);
    process.exit(1);
  }
}

function findConfigError(error: unknown): ConfigError | undefined {
  for (let current = error, depth = 0; current && depth < 5; current = (current as Error).cause, depth++) {
    if (current instanceof ConfigError) return current;
  }
  return undefined;
}

/**
 * SIGTERM/SIGINT (design.md §6): readiness turns 503 at once, in-flight work finishes, the
 * process exits when idle or at GATEWAY_DRAIN_TIMEOUT after closing what remains (which aborts
 * upstream sockets, fetches and children through the client-disconnect path). A second signal
 * exits at once.
 */
function installDrainHandlers(app: NestExpressApplication, drainTimeoutMs: number): void {
  const drain = app.get(DrainService);
  const server = app.getHttpServer() as Server;
  const logger = app.get(Logger);
  let signalled = false;
  const onSignal = async (signal: NodeJS.Signals) => {
    if (signalled) process.exit(130);
    signalled = true;
    drain.startDraining();
    logger.log({ event: 'drain_start', signal, in_flight: drain.inFlightCount }, 'drain_start');
    const idle = await drain.waitForIdle(drainTimeoutMs);
    server.closeIdleConnections();
    if (!idle) {
      server.closeAllConnections();
      await drain.waitForIdle(ABORT_GRACE_MS);
    }
    logger.log({ event: 'drain_end', idle, in_flight: drain.inFlightCount }, 'drain_end');
    await app.close().catch(() => undefined);
    process.exit(0);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

void bootstrap();
