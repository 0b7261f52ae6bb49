import type { FamilyParameters } from './parameter-fate';
import type { ProviderId } from './provider-id';

/** How a family's login is made and its CLI installed: the fix its messages name. */
export interface FamilyFix {
  readonly cli: string;
  /** The one command (or steps) that logs the CLI in. */
  readonly login: string;
  /** How to install the CLI, for the families that run it as a child process. */
  readonly install?: string;
  /** How to update that CLI when the upstream refuses its version as too old. */
  readonly update?: string;
  /** What the vendor calls the paid usage it draws after the plan is spent, and where the owner manages it. */
  readonly paidUsage?: { readonly name: string; readonly page: string };
}

/** The generic parts of a family's public message (core/error-codes.ts `familyMessage`). */
export interface FamilyMessageParts {
  readonly provider: ProviderId;
  readonly fix: FamilyFix;
  /** ` (resets <ISO time>)` when the upstream reported when the limit resets, else empty. */
  readonly reset: string;
  /** `retry in <wait>` or `retry after the reset` when the wait is known; undefined when each message says its own. */
  readonly retry: string | undefined;
}

/**
 * One upstream family, as its own folder declares it (docs/architecture.md "How to add a family").
 * Everything the shared layers say or do differently per family is read from here, so no shared
 * file names a family: `src/families.ts` registers the built-in ones, and a test registers its own
 * through `registerFamily`.
 *
 * This is the part every layer may read. A layer above core that needs more of a family declares
 * its part beside the code that reads it, by augmenting this interface (`declare module
 * '…/core/family'`): the login reading in accounts/, the adapter in providers/shared/. So core
 * imports nothing and each part is typed where it is used.
 */
export interface Family {
  /** The contract name: the prefix of its model ids, its metric label, its GATEWAY_PROVIDERS entry. */
  readonly id: string;
  /** How the docs title its column: the id and the vendor's product. */
  readonly title: string;
  /** Other names GATEWAY_PROVIDERS takes for it: the name of the CLI whose login it uses. */
  readonly cliNames: readonly string[];
  readonly fix: FamilyFix;
  /** The setting that bounds one of its turns (its PROVIDER_*_TIMEOUT), named by timeout messages. */
  readonly timeoutSetting?: string;
  /**
   * Its fate (and the doc's note) for every Chat Completions field whose fate differs by family
   * (core/parameter-fate.ts): what its upstream takes, what the chat layer does for it, what it
   * ignores and why. The chat layer hands the adapter only the `honoured` values and does the
   * `enforced` ones itself; docs/chat.md's table shows these as the family's column.
   */
  readonly parameters: FamilyParameters;
  /**
   * Its upstream holds a tool's calls to the tool's `parameters` schema when the tool says
   * `strict: true`. Absent: the chat layer checks each such call itself (chat/strict-tools.ts).
   */
  readonly strictToolsUpstream?: true;
}
