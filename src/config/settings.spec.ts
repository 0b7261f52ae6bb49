import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { DefaultedSettingName, ParsedOf, SettingName } from './settings';
import { allSettings, settingsByFlag, writtenDefault } from './settings';
import { BUILT_IN_FAMILIES } from '../families';
import { CODEX_CLI_VERSION } from '../providers/provider-a/codex-cli-version';
import { codexClient } from '../providers/provider-a/provider-a.client';
import { familyIds, familyOf } from '../core/family-registry';
import { ModelCatalog } from '../models/model-catalog';
import { loadFaithfulProfile } from '../providers/provider-a/provider-a.faithful-profile';
import { StructuredAllowlist } from '../structured/structured-allowlist';
import { loadConfig } from './app-config';

const SETTINGS = allSettings();
const SETTINGS_BY_FLAG = settingsByFlag();

const ROOT = path.resolve(__dirname, '..', '..');

/** Every setting of docs/design/decisions.md §2 (the table the docs and --help are generated from must hold them all). */
const DESIGN_SETTINGS = [
  'GATEWAY_HOST',
  'GATEWAY_PORT',
  'GATEWAY_BEARER_SECRET',
  'GATEWAY_PROVIDERS',
  'GATEWAY_MODEL_CATALOG',
  'GATEWAY_CALLER_HEADER',
  'GATEWAY_MAX_BODY_BYTES',
  'GATEWAY_STREAM_IDLE_TIMEOUT',
  'GATEWAY_DRAIN_TIMEOUT',
  'METRICS_ENABLED',
  'LOG_LEVEL',
  'CODEX_HOME',
  'PROVIDER_A_AUTH_FILE',
  'PROVIDER_A_URL',
  'PROVIDER_A_TOKEN_URL',
  'PROVIDER_A_TIMEOUT',
  'PRIMARY_FAITHFUL_PROFILE',
  'PRIMARY_CUSTOM_TOOL_WIRE',
  'PRIMARY_AGENT_QUEUE_ENABLED',
  'PRIMARY_AGENT_QUEUE_KEY_MODE',
  'PRIMARY_AGENT_MAX_ACTIVE',
  'PRIMARY_AGENT_MAX_ACTIVE_PER_KEY',
  'PRIMARY_AGENT_QUEUE_LIMIT',
  'PRIMARY_AGENT_QUEUE_TIMEOUT',
  'PRIMARY_CONTEXT_MANAGEMENT_ENABLED',
  'PRIMARY_CONTEXT_MANAGEMENT_MAX_BYTES',
  'PRIMARY_CONTEXT_MANAGEMENT_MAX_MESSAGES',
  'PRIMARY_CONTEXT_MANAGEMENT_RECENT_MESSAGES',
  'PRIMARY_CONTEXT_MANAGEMENT_TOOL_OUTPUT_MAX_BYTES',
  'PRIMARY_CONTEXT_MANAGEMENT_COMPACTED_TOOL_OUTPUT_BYTES',
  'GEMINI_HOME',
  'PROVIDER_B_AUTH_FILE',
  'PROVIDER_B_URL',
  'PROVIDER_B_TOKEN_URL',
  'PROVIDER_B_PROJECT',
  'PROVIDER_B_TIMEOUT',
  'PROVIDER_C_COMMAND',
  'PROVIDER_C_MAX_PROCESSES',
  'PROVIDER_C_TIMEOUT',
  'STRUCTURED_INFERENCE_ENABLED',
  'STRUCTURED_MAX_ACTIVE',
  'STRUCTURED_MAX_ACTIVE_PER_KEY',
  'STRUCTURED_QUEUE_LIMIT',
  'STRUCTURED_QUEUE_TIMEOUT',
  'STRUCTURED_MAX_DEADLINE',
  'STRUCTURED_IDEMPOTENCY_TTL',
  'STRUCTURED_IDEMPOTENCY_CAPACITY',
  'STRUCTURED_REPLICAS',
  'STRUCTURED_MODELS',
  'BUILD_VERSION',
  'BUILD_COMMIT',
  'BUILD_DATE',
];

describe('SETTINGS', () => {
  it('holds every setting of docs/design/decisions.md §2 exactly once', () => {
    const names = SETTINGS.map((definition) => definition.env);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(expect.arrayContaining(DESIGN_SETTINGS));
  });

  it('gives each setting a --kebab-case flag that resolves back to it', () => {
    for (const definition of SETTINGS) {
      const kebab = `--${definition.env.toLowerCase().replace(/_/g, '-')}`;
      expect(SETTINGS_BY_FLAG.get(kebab)).toBe(definition);
      expect(SETTINGS_BY_FLAG.get(definition.flag)).toBe(definition);
      expect(definition.description.trim()).not.toBe('');
    }
    expect(SETTINGS_BY_FLAG.get('--structured-enabled')?.env).toBe('STRUCTURED_INFERENCE_ENABLED');
  });

  /**
   * The defaults that depend on other settings or on bundled data (rows marked `derivedDefault`),
   * each held to what its text says by what the loader resolves when the setting is unset.
   */
  const COMPUTED_DEFAULTS: Record<string, (defaultText: string) => void> = {
    PROVIDER_A_CLIENT_VERSION: (text) => {
      expect(text).toBe('the Codex CLI release the gateway verifies (docs/providers.md)');
      expect(loadConfig({}).providerA.clientVersion).toBeUndefined();
      expect(codexClient(undefined).version).toBe(CODEX_CLI_VERSION);
    },
    GATEWAY_PROVIDERS: (text) => {
      expect(text).toBe('every built-in family, in the order of src/families.ts');
      expect(loadConfig({}).enabledProviders).toEqual(BUILT_IN_FAMILIES.map((family) => family.id));
    },
    PROVIDER_A_AUTH_FILE: (text) => {
      const config = loadConfig({ HOME: '/home/someone', CODEX_HOME: '/opt/codex' });
      expect(config.providerA.accounts.map((login) => login.loginFile)).toEqual([
        text.replace('$CODEX_HOME', '/opt/codex'),
      ]);
    },
    GEMINI_HOME: (text) => {
      expect(text).toBe('$GEMINI_CLI_HOME/.gemini when GEMINI_CLI_HOME is set, else ~/.gemini');
      expect(loadConfig({ HOME: '/home/someone', GEMINI_CLI_HOME: '/opt/cli' }).providerB.geminiHome).toBe(
        '/opt/cli/.gemini',
      );
      expect(loadConfig({ HOME: '/home/someone' }).providerB.geminiHome).toBe('/home/someone/.gemini');
    },
    PROVIDER_B_AUTH_FILE: (text) => {
      const config = loadConfig({ HOME: '/home/someone', GEMINI_HOME: '/opt/gemini' });
      expect(config.providerB.accounts.map((login) => login.loginFile)).toEqual([
        text.replace('$GEMINI_HOME', '/opt/gemini'),
      ]);
    },
    PRIMARY_FAITHFUL_PROFILE: (text) => {
      expect(text).toBe('built-in');
      expect(loadConfig({}).providerA.faithfulProfilePath).toBeUndefined();
      expect(loadFaithfulProfile(undefined)).toBeDefined();
    },
    STRUCTURED_MODELS: (text) => {
      expect(text).toBe(
        'the sol, terra and luna tier models that serve strict schemas, with effort and -fast variants',
      );
      expect(loadConfig({}).structured.models).toBeUndefined();
      const catalog = ModelCatalog.load(undefined, familyIds()).bundledEntries();
      const { ids } = StructuredAllowlist.build({ catalog, enabledProviders: familyIds() });
      const rows = new Map(catalog.map((entry) => [entry.id, entry]));
      expect(ids.every((id) => familyOf(rows.get(id)!.provider).catalog?.strictTierModels === true)).toBe(true);
      const shape = /-(sol|terra|luna)(-fast)?(-[a-z]+)?$/;
      expect(ids.filter((id) => !shape.test(id))).toEqual([]);
      const tiers = new Set(ids.map((id) => shape.exec(id)![1]));
      expect([...tiers].sort()).toEqual(['luna', 'sol', 'terra']);
      expect(ids.some((id) => shape.exec(id)![2])).toBe(true);
      expect(ids.some((id) => shape.exec(id)![3])).toBe(true);
    },
  };

  it('holds each written default as its own parser takes it, and resolves the derived ones as their text says', () => {
    for (const definition of SETTINGS) {
      if (definition.derivedDefault) {
        expect(writtenDefault(definition)).toBeUndefined();
        COMPUTED_DEFAULTS[definition.env](definition.defaultText!);
      } else {
        expect(writtenDefault(definition)).toBe(definition.defaultText);
        if (definition.defaultText !== undefined)
          expect(() => definition.parse(definition.defaultText!, { home: '/home/someone' })).not.toThrow();
      }
    }
    const derived = SETTINGS.filter((definition) => definition.derivedDefault).map((definition) => definition.env);
    expect(Object.keys(COMPUTED_DEFAULTS).sort()).toEqual([...derived].sort());
  });

  it('types each setting by what its parser returns, so the loader reads it without a cast', () => {
    const port: ParsedOf<'GATEWAY_PORT'> = 8088;
    expect(SETTINGS.find((definition) => definition.env === 'GATEWAY_PORT')!.parse('8088', { home: '/' })).toBe(port);
    // @ts-expect-error GATEWAY_PORT parses to a number, not a string
    const portText: ParsedOf<'GATEWAY_PORT'> = '8088';
    // @ts-expect-error a name outside the table is no setting
    const unknown: SettingName = 'GATEWAY_PORTS';
    // @ts-expect-error GATEWAY_BEARER_SECRET has no default, so it can only be read as possibly unset
    const noDefault: DefaultedSettingName = 'GATEWAY_BEARER_SECRET';
    expect([port, portText, unknown, noDefault]).toEqual([8088, '8088', 'GATEWAY_PORTS', 'GATEWAY_BEARER_SECRET']);
  });

  it('names no family in a shared row, so a family added or removed leaves them true', () => {
    const familyRows = new Set(BUILT_IN_FAMILIES.flatMap((family) => family.settings?.rows ?? []));
    const shared = SETTINGS.filter((definition) => !familyRows.has(definition));
    const named = shared.flatMap((definition) =>
      BUILT_IN_FAMILIES.filter((family) =>
        `${definition.description} ${definition.defaultText ?? ''}`.includes(family.id),
      ).map((family) => `${definition.env}: ${family.id}`),
    );
    expect(named).toEqual([]);
  });

  it('marks the bearer secret sensitive so errors never echo it', () => {
    expect(SETTINGS.find((definition) => definition.env === 'GATEWAY_BEARER_SECRET')?.sensitive).toBe(true);
  });
});

describe('docs/configuration.md', () => {
  it('is up to date with the settings table (regenerate with `npm run docs:config`)', () => {
    const check = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'gen-config-docs.mjs'), '--check'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
  });

  it('lists every setting with its flag and default', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs', 'configuration.md'), 'utf8');
    for (const definition of SETTINGS) {
      const fallback = definition.defaultText === undefined ? 'unset' : `\`${definition.defaultText}\``;
      expect(doc).toContain(`| \`${definition.env}\` | \`${definition.flag}\` | ${fallback} |`);
    }
  });
});
