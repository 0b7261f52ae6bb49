/*
 * How the catalog spells the ids of a live-listed model (docs/chat.md "Model ids"): `<slug>`,
 * `<slug>-<effort>`, `<slug>-fast` and `<slug>-fast-<effort>`, `-fast` meaning the priority tier.
 * The same spelling read back tells the model and the suffixes of an id the catalog no longer has.
 */

/** What a variant id names. */
export interface VariantParts {
  readonly slug: string;
  /** The effort the id names; `null`: the model's default. */
  readonly effort: string | null;
  /** The priority tier (`-fast`). */
  readonly fast: boolean;
}

/** `gpt-7-sol`, fast, `high` → `gpt-7-sol-fast-high`. */
export function variantId({ slug, effort, fast }: VariantParts): string {
  return `${slug}${fast ? '-fast' : ''}${effort === null ? '' : `-${effort}`}`;
}

/**
 * `gpt-7-sol-fast-high` → `gpt-7-sol`, fast, `high`: the suffixes `variantId` adds, taken off the
 * end. `isEffort` says which last words are efforts; an id without such suffixes is its own slug.
 */
export function parseVariantId(id: string, isEffort: (word: string) => boolean): VariantParts {
  let slug = id;
  let effort: string | null = null;
  const dash = slug.lastIndexOf('-');
  if (dash > 0 && isEffort(slug.slice(dash + 1))) {
    effort = slug.slice(dash + 1);
    slug = slug.slice(0, dash);
  }
  const fast = slug.length > FAST.length && slug.endsWith(FAST);
  return { slug: fast ? slug.slice(0, -FAST.length) : slug, effort, fast };
}

const FAST = '-fast';
