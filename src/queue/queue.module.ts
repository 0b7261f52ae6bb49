import { Global, Module } from '@nestjs/common';
import { AgentQueueService } from './agent-queue.service';

/** Admission control (agent queues per family). No HTTP here. */
@Global()
@Module({ providers: [AgentQueueService], exports: [AgentQueueService] })
export class QueueModule {}
