import { DynamicModule, Global, Module } from '@nestjs/common';
import { AppConfig } from './app-config';
import { APP_CONFIG } from './config.tokens';

/** Exposes the AppConfig validated at boot (main.ts or a test) to every module. */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    return { module: ConfigModule, providers: [{ provide: APP_CONFIG, useValue: config }], exports: [APP_CONFIG] };
  }
}
