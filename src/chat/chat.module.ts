import { Module } from '@nestjs/common';
import { KeepAliveSweep } from '../common/sse/keep-alive-sweep';
import { OutputValidator } from '../common/json-schema/output-validator';
import { MetricsModule } from '../metrics/metrics.module';
import { ModelsModule } from '../models/models.module';
import { ProvidersModule } from '../providers/providers.module';
import { QueueModule } from '../queue/queue.module';
import { ChatController } from './chat.controller';
import { ChatOrchestrator } from './chat-orchestrator';

@Module({
  imports: [ProvidersModule, ModelsModule, QueueModule, MetricsModule],
  controllers: [ChatController],
  providers: [ChatOrchestrator, OutputValidator, KeepAliveSweep],
})
export class ChatModule {}
