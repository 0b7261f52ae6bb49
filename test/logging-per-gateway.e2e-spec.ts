import { Logger } from 'nestjs-pino';
import { startGateway } from './support/create-test-app';

/**
 * Every line a gateway writes goes to that gateway's own stream, also in a process that runs
 * several (a Jest worker): the injectable loggers are bound to the app's root logger
 * (src/common/logging/logging.module.ts), not to a root kept once per process.
 */
describe('two gateways in one process', () => {
  it("each writes its injected PinoLogger's and its Logger's lines into its own capture only", async () => {
    const first = await startGateway({ GATEWAY_PROVIDERS: 'provider_b' });
    try {
      const second = await startGateway({
        GATEWAY_PROVIDERS: 'provider_a',
        // No login, so nothing is sent; an unreachable address all the same.
        PROVIDER_A_URL: 'http://127.0.0.1:9/backend-api/codex/responses',
      });
      try {
        // The login report's startup round, written through LoginReport's injected PinoLogger.
        const providers = (gateway: typeof first) =>
          gateway.logs.records('login_state').map((record) => record.provider);
        expect(providers(first)).toEqual(['provider_b']);
        expect(providers(second)).toEqual(['provider_a']);

        // nestjs-pino's Logger, the LoggerService main.ts writes its startup lines through.
        second.app.get(Logger).log({ event: 'second_logger_line' }, 'second_logger_line', 'main');
        first.app.get(Logger).log({ event: 'first_logger_line' }, 'first_logger_line', 'main');
        expect(second.logs.records().map((record) => record.event)).toContain('second_logger_line');
        expect(second.logs.records('first_logger_line')).toEqual([]);
        expect(first.logs.records().map((record) => record.event)).toContain('first_logger_line');
        expect(first.logs.records('second_logger_line')).toEqual([]);
      } finally {
        await second.close();
      }
    } finally {
      await first.close();
    }
  });
});
