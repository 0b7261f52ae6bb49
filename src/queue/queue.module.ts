import { Module } from '@nestjs/common';
import { MetricsModule } from '../metrics/metrics.module';
import { AgentQueueService } from './agent-queue.service';
import { ConversationAliases } from './conversation-aliases';

/**
 * Admission control for chat tool turns: one fair queue per upstream family
 * (docs/design/behaviours.md §4.1), and the chat identities a turn keeps. No HTTP here.
 */
@Module({
  imports: [MetricsModule],
  providers: [AgentQueueService, ConversationAliases],
  exports: [AgentQueueService, ConversationAliases],
})
export class QueueModule {}
