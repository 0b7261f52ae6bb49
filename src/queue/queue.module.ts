import { Global, Module } from '@nestjs/common';

/** Admission control (agent queues per family, provider_c process slots). No HTTP here. */
@Global()
@Module({ providers: [], exports: [] })
export class QueueModule {}
