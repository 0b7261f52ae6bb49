import { Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ChatService } from './chat.service';

/**
 * `POST /v1/chat/completions`. Raw `@Res()` so the service controls when SSE headers are
 * committed (only after the upstream accepted the turn) and honours backpressure; no global
 * interceptor maps this response (style.md §5).
 */
@Controller('v1/chat')
export class ChatController {
  constructor(private readonly chat: ChatService) {}

  @Post('completions')
  @HttpCode(200)
  async create(@Req() request: Request, @Res() response: Response): Promise<void> {
    await this.chat.handle(request, response);
  }
}
