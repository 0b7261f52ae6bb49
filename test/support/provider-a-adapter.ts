import type { AppConfig } from '../../src/config/app-config';
import { loadConfig } from '../../src/config/app-config';
import { ProviderAAdapter } from '../../src/providers/provider-a/provider-a.adapter';
import { adapterModule } from './adapter-module';
import type { FakeProviderA } from './fake-provider-a';
import type { ProviderASettingsOptions } from './provider-a-fixtures';
import { providerASettings } from './provider-a-fixtures';

/**
 * A `ProviderAAdapter` pointed at the fake, built by Nest's testing module (closed after the
 * test), with a private CODEX_HOME under `home` holding a valid login (shaped by
 * `options.auth`), short timers, the classic wire shape and no live model list. `settings`
 * override any setting.
 */
export async function makeProviderAAdapter(
  fake: FakeProviderA,
  home: string,
  options: ProviderASettingsOptions & { settings?: Record<string, string> } = {},
): Promise<{ adapter: ProviderAAdapter; config: AppConfig; authFile: string; codexHome: string }> {
  const env: Record<string, string> = {
    HOME: home,
    GATEWAY_STREAM_IDLE_TIMEOUT: '5s',
    PROVIDER_A_TIMEOUT: '20s',
    PROVIDER_A_MODELS_REFRESH: '0',
    // The classic body these specs read; the catalog's per-model shape is provider-a-wire.e2e-spec.ts's.
    PROVIDER_A_WIRE: 'classic',
    ...providerASettings(fake, home, options),
    ...options.settings,
  };
  const config = loadConfig(env);
  return {
    adapter: (await adapterModule(ProviderAAdapter, config)).adapter,
    config,
    authFile: env.PROVIDER_A_AUTH_FILE,
    codexHome: env.CODEX_HOME,
  };
}
