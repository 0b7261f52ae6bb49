import * as os from 'node:os';
import { createGatewayApp } from '../src/app.factory';
import { ConfigError, loadConfig } from '../src/config/app-config';
import { startGateway } from './support/create-test-app';
import { LogCapture } from './support/log-capture';
import { postStructured, structuredBody } from './support/structured-client';

/**
 * Startup of the structured allowlist (docs/design/behaviours.md §6.4).
 */

jest.setTimeout(20_000);

describe('structured allowlist at startup', () => {
  it('drops provider_b/provider_c ids from STRUCTURED_MODELS with one warning and a new policy version', async () => {
    const gateway = await startGateway({
      STRUCTURED_INFERENCE_ENABLED: 'true',
      STRUCTURED_MODELS: 'gpt-5.6-sol, gemini-2.5-pro ,sonnet,gpt-5.6-sol',
    });
    try {
      const warnings = gateway.logs.records('structured_models_dropped');
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({
        level: 40,
        allowed: 1,
        models: ['gemini-2.5-pro (no_strict_schema)', 'sonnet (no_strict_schema)'],
      });
      const enabled = gateway.logs.records('structured_enabled')[0];
      expect(enabled).toMatchObject({ models: 1 });
      expect(enabled.model_policy_version).toMatch(/^[0-9a-f]{16}$/);
      expect(enabled.model_policy_version).not.toBe('4a18bfa0d9c258ef');
      const answer = await postStructured(gateway, structuredBody({ model: 'gemini-2.5-pro' }));
      expect([answer.status, answer.error?.code, answer.error?.details]).toEqual([
        404,
        'unsupported_model',
        ['supported models: gpt-5.6-sol'],
      ]);
    } finally {
      await gateway.close();
    }
  });

  it('fails startup with a ConfigError naming STRUCTURED_MODELS for an id outside the catalog', async () => {
    // Built directly (not through startGateway) so a failed boot leaves no temporary HOME behind.
    const config = loadConfig({
      HOME: os.tmpdir(),
      LOG_LEVEL: 'silent',
      STRUCTURED_INFERENCE_ENABLED: 'true',
      STRUCTURED_MODELS: 'gpt-5.6-sol,gpt-9000',
    });
    const boot = createGatewayApp(config, { logStream: new LogCapture() });
    await expect(boot).rejects.toThrow(ConfigError);
    await expect(boot).rejects.toThrow(
      /invalid setting STRUCTURED_MODELS.*"gpt-9000" is not a model id of the catalog: name ids GET \/v1\/models lists, or unset it for the default allowlist \(got "gpt-5\.6-sol,gpt-9000"\)$/,
    );
  });
});
