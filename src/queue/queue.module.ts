import { Global, Module } from '@nestjs/common';
import { AgentQueueService } from './agent-queue.service';

/**
 * Admission control for chat tool turns: one fair queue per upstream family
 * (gateway-behaviours.md §4.1). Global so the chat layer can inject it without importing. No HTTP here.
 */
@Global()
@Module({ providers: [AgentQueueService], exports: [AgentQueueService] })
export class QueueModule {}
