import type { LoggerService } from '@nestjs/common';
import type { Logger } from 'nestjs-pino';

/**
 * Nest's own messages go to pino only from `warn` up: its info-level boot listings (modules,
 * routes) are not events worth a line. Gateway code logs through PinoLogger directly.
 */
export class FrameworkLogger implements LoggerService {
  constructor(private readonly pino: Logger) {}

  log(): void {}
  debug(): void {}
  verbose(): void {}

  warn(message: unknown, ...rest: unknown[]): void {
    this.pino.warn(message, ...rest);
  }

  error(message: unknown, ...rest: unknown[]): void {
    this.pino.error(message, ...rest);
  }

  fatal(message: unknown, ...rest: unknown[]): void {
    this.pino.fatal(message, ...rest);
  }
}
