import { Controller, HttpCode, Post, Req, Res, UseFilters } from '@nestjs/common';
import type { Request, Response } from 'express';
import { StructuredExceptionFilter } from './structured-exception.filter';
import { StructuredService } from './structured.service';

/**
 * `POST /v1/structured/inference` (contract "Endpoints"). Raw `@Res()`: the service decides
 * when and whether to answer (a participant whose client left gets nothing). The filter
 * answers what fails before the handler runs, such as a rejected bearer, in the structured
 * shape and records it like every other structured failure.
 */
@Controller('v1/structured')
@UseFilters(StructuredExceptionFilter)
export class StructuredController {
  constructor(private readonly structured: StructuredService) {}

  @Post('inference')
  @HttpCode(200)
  async infer(@Req() request: Request, @Res() response: Response): Promise<void> {
    await this.structured.handle(request, response);
  }
}
