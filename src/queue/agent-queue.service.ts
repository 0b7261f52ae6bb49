// PLACEHOLDER written by the lead so the tree compiles; the queue engineer replaces this file entirely.
import { Injectable } from '@nestjs/common';
import type { EventLogger, ProviderId } from '../providers/provider-adapter';
import type { QueueSlot } from './fair-queue';
import type { QueueKey } from './queue-key';

@Injectable()
export class AgentQueueService {
  async admit(_params: { provider: ProviderId; toolTurn: boolean; key: QueueKey; signal: AbortSignal; logger: EventLogger; requestId: string }): Promise<QueueSlot> {
    return { release: () => undefined };
  }
}
