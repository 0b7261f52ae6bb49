/**
 * A family's contract name (docs/design/decisions.md §1): the id a `Family` declares. The families
 * themselves are listed in src/families.ts and read through src/core/family-registry.ts.
 */
export type ProviderId = string;
