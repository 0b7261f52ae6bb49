import { Module } from '@nestjs/common';
import { MetricsModule } from '../metrics/metrics.module';
import { ModelsModule } from '../models/models.module';
import { ProvidersModule } from '../providers/providers.module';
import { QueueModule } from '../queue/queue.module';
import { ChatController } from './chat.controller';
import { ChatOrchestrator } from './chat-orchestrator';

@Module({ imports: [ProvidersModule, ModelsModule, QueueModule, MetricsModule], controllers: [ChatController], providers: [ChatOrchestrator] })
export class ChatModule {}
