import { Test, type TestingModule } from '@nestjs/testing';
import { Logger as NestPinoLoggerService, PinoLogger } from 'nestjs-pino';
import { Writable } from 'node:stream';
import type { Logger } from 'pino';
import { LoggingModule, ROOT_LOGGER } from './logging.module';

/** The lines one LoggingModule writes, without pino's `time` (the only field that moves). */
class Lines extends Writable {
  readonly lines: string[] = [];

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    this.lines.push(chunk.toString('utf8').replace(/"time":\d+,/, ''));
    callback();
  }
}

async function loggingModule(stream: Lines, level = 'info'): Promise<TestingModule> {
  return Test.createTestingModule({ imports: [LoggingModule.forRoot({ level, format: 'json', stream })] }).compile();
}

describe('LoggingModule', () => {
  const opened: TestingModule[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((module) => module.close()));
  });

  async function open(stream: Lines, level?: string): Promise<TestingModule> {
    const module = await loggingModule(stream, level);
    opened.push(module);
    return module;
  }

  it("writes an injected PinoLogger's line exactly as the root logger writes the same call", async () => {
    const stream = new Lines();
    const module = await open(stream);
    const logger = await module.resolve(PinoLogger);
    const root = module.get<Logger>(ROOT_LOGGER);
    const error = new Error('boom');

    logger.info({ event: 'some_event', count: 1, nested: { list: [1, 2] } }, 'some_event');
    root.info({ event: 'some_event', count: 1, nested: { list: [1, 2] } }, 'some_event');
    logger.warn({ event: 'other_event', err: error }, 'other_event');
    root.warn({ event: 'other_event', err: error }, 'other_event');
    logger.debug({ event: 'below_level' }, 'below_level');

    expect(stream.lines).toHaveLength(4);
    expect(stream.lines[0]).toBe(stream.lines[1]);
    expect(stream.lines[2]).toBe(stream.lines[3]);
  });

  it('gives every injection its own PinoLogger, so a context set on one stays on it', async () => {
    const stream = new Lines();
    const module = await open(stream);
    const named = await module.resolve(PinoLogger);
    const plain = await module.resolve(PinoLogger);
    expect(named).not.toBe(plain);
    named.setContext('Named');

    named.info({ event: 'named_line' }, 'named_line');
    plain.info({ event: 'plain_line' }, 'plain_line');

    const records = stream.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records[0]).toMatchObject({ context: 'Named', event: 'named_line' });
    expect(records[1]).not.toHaveProperty('context');
  });

  it("provides nestjs-pino's Logger (Nest's LoggerService) over the same root: the last argument is the context", async () => {
    const stream = new Lines();
    const module = await open(stream);
    const service = module.get(NestPinoLoggerService);
    expect(service).toBeInstanceOf(NestPinoLoggerService);

    service.log({ event: 'service_line', port: 1 }, 'service_line', 'main');

    expect(stream.lines.map((line) => JSON.parse(line) as unknown)).toEqual([
      expect.objectContaining({ level: 30, context: 'main', event: 'service_line', port: 1, msg: 'service_line' }),
    ]);
  });

  it('keeps two modules in one process apart: each writes to its own stream, at its own level', async () => {
    const first = new Lines();
    const second = new Lines();
    const firstModule = await open(first, 'info');
    const secondModule = await open(second, 'debug');

    (await secondModule.resolve(PinoLogger)).debug({ event: 'second_line' }, 'second_line');
    secondModule.get(NestPinoLoggerService).warn({ event: 'second_service_line' }, 'second_service_line', 'main');
    (await firstModule.resolve(PinoLogger)).info({ event: 'first_line' }, 'first_line');
    (await firstModule.resolve(PinoLogger)).debug({ event: 'first_debug_line' }, 'first_debug_line');

    const events = (stream: Lines) => stream.lines.map((line) => (JSON.parse(line) as { event: string }).event);
    expect(events(first)).toEqual(['first_line']);
    expect(events(second)).toEqual(['second_line', 'second_service_line']);
  });
});
