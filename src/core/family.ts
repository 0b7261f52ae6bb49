import type { Type } from '@nestjs/common';
import type { ConfiguredLogin } from '../accounts/configured-logins';
import type { AppConfig } from '../config/app-config';
import type { ProviderAdapter } from '../providers/shared/provider-adapter';

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

/**
 * One upstream family, as its own folder declares it (docs/architecture.md "Adding a family").
 * Everything the shared layers say or do differently per family is read from here, so no shared
 * file names a family: `src/families.ts` lists the built-in ones, and a test registers its own
 * through `registerFamily`.
 */
export interface Family {
  /** The contract name: the prefix of its model ids, its metric label, its GATEWAY_PROVIDERS entry. */
  readonly id: string;
  /** How the docs title its column: the id and the vendor's product. */
  readonly title: string;
  /** Other names GATEWAY_PROVIDERS takes for it: the name of the CLI whose login it uses. */
  readonly cliNames: readonly string[];
  readonly fix: FamilyFix;
  /** Logins of this family the configuration names, each with its offline check. */
  readonly logins?: (config: AppConfig) => ConfiguredLogin[];
  /**
   * The adapter class, loaded when the family is enabled (a disabled family's code is never
   * loaded); Nest builds it with its dependencies like any provider.
   */
  readonly adapter: () => Promise<Type<ProviderAdapter>>;
}
