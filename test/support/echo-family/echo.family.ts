import * as path from 'node:path';
import { setting } from '../../../src/config/settings';
import { parseDuration, parseUrl } from '../../../src/config/setting-parsers';
import type { ErrorSpec } from '../../../src/core/error-codes';
import type { Family } from '../../../src/core/family';
import type { FamilyParameters, PerFamilyField } from '../../../src/core/parameter-fate';
import { enforced, honoured, ignored, PER_FAMILY_FIELDS } from '../../../src/core/parameter-fate';
import { echoAdapterClass } from './echo.adapter';
import { ECHO_ID, ECHO_MODEL_RETIRED } from './echo.constants';

export { ECHO_ID, ECHO_MODEL_RETIRED };

/** One login of the echo family: the operator's alias and the bearer the fake upstream knows it by. */
export interface EchoLoginOptions {
  readonly alias: string;
  readonly token: string;
}

/** What an echo declaration closes over: its logins (a built-in family reads them from login files). */
export interface EchoFamilyOptions {
  /** The pooled logins, in the order the pool lists them. */
  readonly logins: readonly EchoLoginOptions[];
}

/** Its settings, as a spec gives them (ECHO_URL=…), placed in its own group of the config. */
export interface EchoSettings {
  readonly url?: string;
  readonly timeoutMs: number;
}

const ECHO_ROWS = [
  setting(
    'ECHO_URL',
    'echo.url',
    undefined,
    "The echo upstream's turn URL (a family of the tests only).",
    parseUrl(['http', 'https']),
  ),
  setting('ECHO_TIMEOUT', 'echo.timeoutMs', '1m', 'Bound on a whole echo turn, retries included.', parseDuration),
];

const ECHO_ERRORS: Readonly<Record<string, ErrorSpec>> = {
  [ECHO_MODEL_RETIRED]: {
    status: 404,
    type: 'invalid_request_error',
    openaiCode: 'model_retired',
    structuredCode: 'unsupported_model',
    streamText: 'model retired',
    message: 'the echo upstream retired this model; pick another echo model',
    upstream: true,
  },
};

/** What the echo upstream takes: the messages only; the gateway cuts at `stop` itself. */
const ECHO_PARAMETERS: FamilyParameters = {
  ...(Object.fromEntries(
    PER_FAMILY_FIELDS.map((field) => [field, ignored('the echo upstream takes no such field')]),
  ) as Record<PerFamilyField, ReturnType<typeof ignored>>),
  messages: honoured('`messages`, as sent'),
  stop: enforced('the gateway cuts the answer at the first stop sequence'),
};

/**
 * A fourth family that exists only in tests: a folder of its own (this one) and a declaration the
 * spec hands to `registerFamily` before it builds the app, as `src/families.ts` lists the built-in
 * ones. Its logins are always usable offline (their tokens are in memory); only the upstream can
 * refuse them.
 */
export function echoFamily(options: EchoFamilyOptions): Family {
  const id = ECHO_ID;
  return {
    id,
    title: `${id} (the test echo upstream)`,
    cliNames: ['echo-cli'],
    fix: { cli: 'Echo CLI', login: "run `echo-cli login` on the gateway's machine" },
    parameters: ECHO_PARAMETERS,
    settings: { rows: ECHO_ROWS },
    catalog: {
      passthroughDefaults: { effort: null, verbosity: null },
      rows: path.join(__dirname, 'echo.catalog.json'),
    },
    errors: ECHO_ERRORS,
    logins: () =>
      options.logins.map(({ alias }) => ({
        provider: id,
        account: alias,
        spawnsCli: false,
        check: () => Promise.resolve({ state: 'usable' as const }),
      })),
    adapter: () => Promise.resolve(echoAdapterClass(options)),
  };
}
