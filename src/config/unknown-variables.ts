import { editDistance } from '../core/edit-distance';
import type { SettingDefinition } from './settings';
import { allSettings } from './settings';

/**
 * The prefixes of the gateway's own variables. A variable with one of them that is no setting is a
 * typo or an obsolete name: it would be ignored without a word, while a mistyped flag is refused.
 * The names the table borrows from other software (CODEX_HOME, GEMINI_HOME, the proxy variables,
 * BUILD_*, which CI systems set by the dozen) leave their prefixes to that software.
 */
export const OWN_PREFIXES: readonly string[] = [
  'GATEWAY_',
  'PROVIDER_',
  'PRIMARY_',
  'STRUCTURED_',
  'ACCOUNT_',
  'METRICS_',
  'LOG_',
];

/** Names with our prefixes that are not settings and are still expected in the environment. */
const NOT_SETTINGS = new Set([
  // The key a client sends (docs/clients.md), often exported in the shell that starts the gateway.
  'GATEWAY_KEY',
]);

/** An environment variable that looks like a setting and is none, and the setting nearest to it. */
export interface UnknownVariable {
  readonly variable: string;
  readonly closest: string;
}

/** A flag written the way its variable would be: `--structured-enabled` → `STRUCTURED_ENABLED`. */
const asVariable = (flag: string) => flag.replace(/^--/, '').toUpperCase().replace(/-/g, '_');

/**
 * The variables of `env` with one of our prefixes that no row of the table reads (an empty one
 * counts as unset, so it is not named), each with the closest setting by name, counting a row's
 * flag as a spelling of it. Sorted by name. Only names are read, never values.
 */
export function unknownSettingVariables(
  env: Readonly<Record<string, string | undefined>>,
  rows: readonly SettingDefinition[] = allSettings(),
): UnknownVariable[] {
  const known = new Set(rows.map((row) => row.env));
  const spellings = rows.flatMap((row) => [
    { spelling: row.env, env: row.env },
    { spelling: asVariable(row.flag), env: row.env },
  ]);
  return Object.keys(env)
    .filter(
      (name) =>
        env[name] !== undefined &&
        env[name] !== '' &&
        !known.has(name) &&
        !NOT_SETTINGS.has(name) &&
        OWN_PREFIXES.some((prefix) => name.startsWith(prefix)),
    )
    .sort()
    .map((variable) => {
      let closest = spellings[0];
      let best = Infinity;
      for (const candidate of spellings) {
        const distance = editDistance(variable, candidate.spelling);
        if (distance < best) [closest, best] = [candidate, distance];
      }
      return { variable, closest: closest.env };
    });
}

/** The warning's fix, in words: the variable is ignored, and the setting it probably meant. */
export function unknownVariableFix({ variable, closest }: UnknownVariable): string {
  return `${variable} is no setting of the gateway, so it is ignored: rename it to ${closest} if that is what you meant, else remove it (docs/configuration.md lists the settings)`;
}

/**
 * A startup refusal's one line, with each unknown variable's fix after it: a misspelt name is
 * often why the refusal came (`GATEWAY_BEARER_SECRT` leaves the secret an open bind needs unset),
 * and the gateway stops before its startup warnings would name it.
 */
export function refusalLine(refusal: string, unknownVariables: readonly UnknownVariable[]): string {
  return [refusal, ...unknownVariables.map(unknownVariableFix)].join('; also ');
}
