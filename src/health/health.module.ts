import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { LifecycleModule } from '../common/lifecycle/lifecycle.module';
import { HealthController } from './health.controller';

@Module({ imports: [TerminusModule.forRoot({ logger: false }), LifecycleModule], controllers: [HealthController] })
export class HealthModule {}
