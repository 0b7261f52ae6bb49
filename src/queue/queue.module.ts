import { Module } from '@nestjs/common';
import { MetricsModule } from '../metrics/metrics.module';
import { AgentQueueService } from './agent-queue.service';

/**
 * Admission control for chat tool turns: one fair queue per upstream family
 * (docs/design/behaviours.md §4.1). No HTTP here.
 */
@Module({ imports: [MetricsModule], providers: [AgentQueueService], exports: [AgentQueueService] })
export class QueueModule {}
