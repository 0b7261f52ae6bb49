import { Module } from '@nestjs/common';
import { MetricsModule } from '../metrics/metrics.module';
import { ProvidersModule } from '../providers/providers.module';
import { QueueModule } from '../queue/queue.module';
import { ChatController } from './chat.controller';
import { ChatService } from './chat.service';

@Module({ imports: [ProvidersModule, QueueModule, MetricsModule], controllers: [ChatController], providers: [ChatService] })
export class ChatModule {}
