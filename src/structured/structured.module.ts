import { Module } from '@nestjs/common';

/** POST /v1/structured/inference; imported only when STRUCTURED_INFERENCE_ENABLED. */
@Module({})
export class StructuredModule {}
