/**
 * What the model catalog does differently per family (docs/chat.md "Model ids"): how its
 * passthrough ids resolve, which efforts are a mode of its CLI, and whether the tier aliases reach
 * its models. Absent: no passthrough defaults, the model as written, no CLI-only effort, no tiers.
 */
export interface FamilyCatalog {
  /** The effort and verbosity a passthrough id (`<family>/<model>`) resolves to when the request names none. */
  readonly passthroughDefaults: { readonly effort: string | null; readonly verbosity: string | null };
  /** The upstream model a passthrough id's model name reaches; absent: the name as written. */
  readonly passthroughModel?: (model: string) => string;
  /**
   * Efforts that are a mode of the family's CLI rather than a value its upstream takes, each with
   * the effort the CLI puts on the wire for it: accepted and resolved to that, never listed.
   */
  readonly cliOnlyEfforts?: Readonly<Record<string, string>>;
  /**
   * The request efforts any of its models takes when neither the live list nor its row names any:
   * another value is 400 naming `reasoning_effort`, as an effort outside a model's list is. Not
   * listed in `GET /v1/models` (they are accepted, not offered). Absent: such a model is not checked.
   */
  readonly acceptedEfforts?: readonly string[];
  /**
   * Its model slugs end in a tier word (`sol`, `terra`, `luna`): the tier aliases reach its models,
   * picked from its live model list, else from its bundled rows. At most one family says so.
   */
  readonly tiers?: boolean;
  /**
   * Its tier models serve strict schemas at every effort the structured route takes (the CLI's
   * output-schema mode), so the structured allowlist takes them by default (docs/structured.md).
   */
  readonly strictTierModels?: boolean;
  /**
   * The path of its rows file (`provider-x.catalog.json` in its folder: `models` rows and their
   * `upstream_models` data, in the GATEWAY_MODEL_CATALOG format): the built-in catalog is every
   * registered family's rows file. Absent: only its passthrough ids reach it.
   */
  readonly rows?: string;
  /**
   * What its upstream's own model names look like (`claude-…`): an id of that shape that is no id
   * of the catalog is answered 404 suggesting its passthrough form `<family>/<id>`, and while the
   * family is disabled, 404 naming the family (docs/error-codes.md "model_not_found").
   */
  readonly modelNames?: RegExp;
  /**
   * Its CLI takes a model name with a `[…]` tag after it (Claude Code's `[1m]`, its context-window
   * switch), so a passthrough a 404 suggests may keep one; for any other family a tag is no part
   * of a name its upstream knows.
   */
  readonly nameTags?: boolean;
  /**
   * Its ids are spelled from upstream model names with the gateway's own suffixes, `-<effort>`
   * and `-fast` (the live list's variant ids, variant-id.ts), which its upstream does not know: the
   * passthrough form a 404 suggests has them taken off (the effort named as `reasoning_effort`),
   * or is left out where it cannot mean the same (`-fast`, an effort the model lacks, a misspelled
   * suffix of a model the catalog knows; docs/error-codes.md "model_not_found").
   */
  readonly variantSuffixes?: boolean;
  /**
   * The model aliases of its CLI that are no ids of the catalog (the CLI resolves them by account,
   * access or mode), each with the ids a 404 for it suggests: ids of the catalog, or
   * `<family>/<alias>` where the CLI itself takes the alias. The gateway never routes such a name
   * itself: which model it means is the CLI's choice, per account.
   */
  readonly cliAliases?: Readonly<Record<string, readonly string[]>>;
}

// The part of a family's declaration the model catalog (and the structured allowlist over it) reads.
declare module '../core/family' {
  interface Family {
    /** How the catalog resolves and lists this family's models (FamilyCatalog above). */
    readonly catalog?: FamilyCatalog;
  }
}
