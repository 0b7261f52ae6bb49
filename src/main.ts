import 'reflect-metadata';
import './families';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AddressInfo } from 'node:net';
import * as net from 'node:net';
import * as os from 'node:os';
import type { AppConfig } from './config/app-config';
import { ConfigError, HelpRequested, loadConfig, renderHelp } from './config/app-config';
import { processArguments, processEnvironment, processExecArgv } from './config/process-env';
import type { UnknownVariable } from './config/unknown-variables';
import { refusalLine, unknownSettingVariables, unknownVariableFix } from './config/unknown-variables';
import { SEMI_SPACE_ARGUMENT, startedSemiSpaceMib } from './common/lifecycle/young-generation';
import { checkListenAddress, listenFailureMessage } from './common/lifecycle/listen-address';

/**
 * nestjs-pino's Logger takes its LAST string argument as the context; naming one keeps the event
 * name in `msg`, like every other record.
 */
const LOG_CONTEXT = 'main';

/**
 * After the drain deadline: how long the requests it ended have to write their `draining` answers
 * and close their upstream turns, before their connections are closed.
 */
const ANSWER_GRACE_MS = 3000;

/** How long closing the server may take once the drain ended (connections no request held). */
const CLOSE_GRACE_MS = 3000;

/** What the `drain_timeout` line tells the operator to do about requests the drain deadline ended. */
const DRAIN_TIMEOUT_FIX =
  'raise GATEWAY_DRAIN_TIMEOUT to the longest turn a rollout should let finish, and with it the time the ' +
  'orchestrator waits before SIGKILL (Kubernetes terminationGracePeriodSeconds, Compose stop_grace_period, ' +
  'docker stop -t) to more than GATEWAY_DRAIN_TIMEOUT + 6 s (docs/deployment.md, "Draining on SIGTERM")';

/** How long nothing must be in flight before idle keep-alive connections are closed. */
const DRAIN_SETTLE_MS = 500;

/** `--check [--live]`: run the setup check (docs/troubleshooting.md) instead of serving. */
const CHECK_FLAG = '--check';
const LIVE_FLAG = '--live';

async function bootstrap(): Promise<void> {
  // Found before any setting is read, so a refusal can name the misspelt variable behind it.
  let unknownVariables: readonly UnknownVariable[] = [];
  try {
    const env = processEnvironment();
    const argv = processArguments();
    // Warned, not refused: a deployment that still sets an obsolete variable keeps starting.
    unknownVariables = unknownSettingVariables(env);
    const check = argv.includes(CHECK_FLAG);
    const live = argv.includes(LIVE_FLAG);
    const config = loadConfig(
      env,
      argv.filter((argument) => argument !== CHECK_FLAG && argument !== LIVE_FLAG),
    );
    // Not "unknown flag": the flag exists, for the setup check only.
    if (live && !check) {
      throw new ConfigError(
        `${LIVE_FLAG} only works with ${CHECK_FLAG} (it sends one tiny chat per family): run \`node dist/main.js ${CHECK_FLAG} ${LIVE_FLAG}\`, or \`npm run check -- ${LIVE_FLAG}\``,
      );
    }
    if (check) {
      const { runSetupCheck } = await import('./setup-check');
      const write = (text: string) => process.stdout.write(text);
      for (const unknown of unknownVariables) write(`warning: ${unknownVariableFix(unknown)}\n`);
      if (unknownVariables.length > 0) write('\n');
      process.exit(await runSetupCheck(config, { live, write }));
    }
    const { host, port } = config.server;
    // A port in use or a foreign address fails here, before the modules' startup work logs
    // anything, so its one line is the only word.
    await checkListenAddress(host, port);
    // The framework is loaded only once the settings are valid: a bad value or --help answers
    // at once instead of after a second of module loading.
    const { createGatewayApp } = await import('./app.factory');
    const app = await createGatewayApp(config);
    await app.listen(port, host).catch((error: unknown) => {
      // Taken since the check (another process was quicker): still the one line.
      const message = listenFailureMessage(error, host, port);
      throw message === undefined ? error : new ConfigError(message);
    });
    await installDrainHandlers(app, config.server.drainTimeoutMs);
    await logListening(app, config, startedSemiSpaceMib(processExecArgv(), env.NODE_OPTIONS) ?? null, unknownVariables);
  } catch (error) {
    if (error instanceof HelpRequested) {
      process.stdout.write(renderHelp());
      process.exit(0);
    }
    const configError = findConfigError(error);
    if (configError) {
      process.stderr.write(`gateway: ${refusalLine(configError.message, unknownVariables)}\n`);
      process.exit(1);
    }
    // Not a setting: a bug, so the stack is worth the extra lines.
    process.stderr.write(`gateway: failed to start: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(1);
  }
}

/**
 * One startup line, so an operator (and the child-process tests, which bind port 0) can see
 * where the gateway listens and what it serves.
 */
async function logListening(
  app: NestExpressApplication,
  config: AppConfig,
  semiSpaceMib: number | null,
  unknownVariables: readonly UnknownVariable[],
): Promise<void> {
  const { Logger } = await import('nestjs-pino');
  const address = app.getHttpServer().address() as AddressInfo;
  const logger = app.get(Logger);
  // One line per variable that looks like a setting and is none (a typo the gateway would ignore).
  for (const unknown of unknownVariables) {
    logger.warn(
      { event: 'setting_variable_unknown', ...unknown, fix: unknownVariableFix(unknown) },
      'setting_variable_unknown',
      LOG_CONTEXT,
    );
  }
  if (semiSpaceMib === null) {
    // V8 takes the bound only when node starts: the gateway says so and runs on, unbounded.
    logger.warn(
      {
        event: 'semi_space_unbounded',
        flag: SEMI_SPACE_ARGUMENT,
        fix: `start node with ${SEMI_SPACE_ARGUMENT} (before dist/main.js, or in NODE_OPTIONS); npm start, the image and the manifests pass it`,
      },
      'semi_space_unbounded',
      LOG_CONTEXT,
    );
  }
  logger.log(
    {
      event: 'gateway_listening',
      host: config.server.host,
      port: address.port,
      providers: config.enabledProviders,
      structured: config.structured.enabled,
      metrics: config.metricsEnabled,
      max_semi_space_mib: semiSpaceMib,
    },
    'gateway_listening',
    LOG_CONTEXT,
  );
}

function findConfigError(error: unknown): ConfigError | undefined {
  for (let current = error, depth = 0; current && depth < 5; current = (current as Error).cause, depth++) {
    if (current instanceof ConfigError) return current;
  }
  return undefined;
}

/**
 * SIGTERM/SIGINT/SIGHUP (docs/design/decisions.md §6, docs/deployment.md "Draining on SIGTERM"): readiness
 * turns 503 at once, in-flight work finishes, the process exits when idle or at
 * GATEWAY_DRAIN_TIMEOUT. At that deadline the server stops accepting connections, a new request on
 * one still open is refused with the `draining` 503, and every request still in flight is ended with the
 * `draining` error, whatever its stage (its upstream turn or wait canceled as a client's leaving
 * cancels it, its answer still written: endRequestsInFlight), given ANSWER_GRACE_MS to write it;
 * only then are the remaining connections closed. The exit comes at the deadline +
 * ANSWER_GRACE_MS + CLOSE_GRACE_MS at the latest, the 6 s the docs tell operators to add to the
 * orchestrator's grace. A second signal exits at once, with 128 + the signal's number, as a shell
 * reports a process the signal ended.
 */
async function installDrainHandlers(app: NestExpressApplication, drainTimeoutMs: number): Promise<void> {
  const { DrainService } = await import('./common/lifecycle/drain.service');
  const { endRequestsInFlight } = await import('./common/http/http-middleware');
  const { Logger } = await import('nestjs-pino');
  const drain = app.get(DrainService);
  const server = app.getHttpServer();
  const logger = app.get(Logger);
  let signalled = false;
  const onSignal = async (signal: NodeJS.Signals) => {
    if (signalled) process.exit(128 + os.constants.signals[signal]);
    signalled = true;
    drain.startDraining();
    logger.log({ event: 'drain_start', signal, in_flight: drain.inFlightCount }, 'drain_start', LOG_CONTEXT);
    const idle = await drain.waitForQuiet(drainTimeoutMs, DRAIN_SETTLE_MS);
    let cut = 0;
    if (!idle) {
      // No new connection from here on; a request on one still open is refused at once
      // (trackInFlight), so none starts an upstream turn the exit would cut without an answer.
      // net's close only stops accepting: http's would also drop the idle connections, one whose
      // request's headers are still arriving among them, with no answer at all.
      net.Server.prototype.close.call(server);
      cut = endRequestsInFlight(drain);
      logger.warn(
        {
          event: 'drain_timeout',
          timeout_ms: drainTimeoutMs,
          cut,
          fix: DRAIN_TIMEOUT_FIX,
        },
        'drain_timeout',
        LOG_CONTEXT,
      );
      await drain.waitForIdle(ANSWER_GRACE_MS);
    }
    server.closeIdleConnections();
    // What is still in flight now did not get its answer out within the grace (a client that
    // stopped reading): its connection is closed.
    const unanswered = drain.inFlightCount;
    if (!idle) server.closeAllConnections();
    logger.log({ event: 'drain_end', idle, cut, in_flight: unanswered }, 'drain_end', LOG_CONTEXT);
    // Closing waits for every connection, counted in flight or not (one still sending its
    // headers, one that arrived since), and for the requests whose connections were just closed
    // to see it, each recording its end: bounded, so the exit comes when the drain said it would.
    const closed = Promise.all([drain.waitForIdle(CLOSE_GRACE_MS), app.close().catch(() => undefined)]);
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref())]);
    // A request records its end in the promise callbacks its response's 'close' set off: they run
    // before the next turn of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
    process.exit(0);
  };
  // A listener's returned promise is ignored by the emitter: a failing drain must still exit, and say why.
  const onSignalOrExit = (signal: NodeJS.Signals) => {
    onSignal(signal).catch((error: unknown) => {
      process.stderr.write(`gateway: drain failed: ${(error as Error)?.stack ?? String(error)}\n`);
      process.exit(1);
    });
  };
  process.on('SIGTERM', onSignalOrExit);
  process.on('SIGINT', onSignalOrExit);
  // A hangup (the terminal closed, or a supervisor's stop signal) drains too: its default would end
  // the process at once, with no answer for what is in flight, and leave the `claude` children
  // (their own process groups) and their work directories behind.
  process.on('SIGHUP', onSignalOrExit);
}

void bootstrap();
