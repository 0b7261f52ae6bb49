import type { Family } from '../../../src/core/family';
import type { FamilyParameters, PerFamilyField } from '../../../src/core/parameter-fate';
import { enforced, honoured, ignored, PER_FAMILY_FIELDS } from '../../../src/core/parameter-fate';
import { echoAdapterClass } from './echo.adapter';

/** One login of the echo family: the operator's alias and the bearer the fake upstream knows it by. */
export interface EchoLoginOptions {
  readonly alias: string;
  readonly token: string;
}

/** What an echo declaration closes over: no settings rows, the spec gives them here. */
export interface EchoFamilyOptions {
  /** The family id (its model-id prefix, metric label and GATEWAY_PROVIDERS entry). */
  readonly id: string;
  /** The fake upstream's turn URL (FakeEchoUpstream.url). */
  readonly url: string;
  /** The pooled logins, in the order the pool lists them. */
  readonly logins: readonly EchoLoginOptions[];
}

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
  const { id } = options;
  return {
    id,
    title: `${id} (the test echo upstream)`,
    cliNames: ['echo-cli'],
    fix: { cli: 'Echo CLI', login: "run `echo-cli login` on the gateway's machine" },
    parameters: ECHO_PARAMETERS,
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
