import { Controller, Get, HttpStatus, Inject, Res } from '@nestjs/common';
import { HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import type { Response } from 'express';
import { Public } from '../common/auth/public.decorator';
import { BUILD_INFO, BuildInfo, CONTRACT_VERSION } from '../common/build/build-info';
import { CompressJson } from '../common/http/compression.interceptor';
import { DrainService } from '../common/lifecycle/drain.service';

@Public()
@CompressJson()
@Controller('health')
export class HealthController {
  constructor(
    @Inject(BUILD_INFO) private readonly build: BuildInfo,
    private readonly drain: DrainService,
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
  ) {}

  /** Liveness and provenance: 200 while the process is up, draining or not. */
  @Get()
  document() {
    return { status: 'ok', contract_version: CONTRACT_VERSION, build: this.build };
  }

  @Get('live')
  live() {
    return this.document();
  }

  /** Readiness (docs/design/decisions.md §6): 200 `{"status":"ready"}`, 503 `{"status":"draining"}`. */
  @Get('ready')
  async ready(@Res() response: Response) {
    const serving = await this.health
      .check([
        () => {
          const indicator = this.indicators.check('serving');
          return this.drain.isDraining ? indicator.down() : indicator.up();
        },
      ])
      .then(
        () => true,
        () => false,
      );
    if (!serving) {
      response.status(HttpStatus.SERVICE_UNAVAILABLE).json({ status: 'draining' });
      return;
    }
    response.status(HttpStatus.OK).json({ status: 'ready' });
  }
}
