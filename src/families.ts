import type { Family } from './core/family';
import { registerFamily } from './core/family-registry';
import { providerA } from './providers/provider-a/provider-a.family';
import { providerB } from './providers/provider-b/provider-b.family';
import { providerC } from './providers/provider-c/provider-c.family';

/**
 * The built-in families, in their default order: a family is its folder under src/providers/
 * plus its one entry here (docs/architecture.md "How to add a family"). Importing this file
 * registers them; every entry point imports it before anything reads the families.
 */
export const BUILT_IN_FAMILIES: readonly Family[] = [providerA, providerB, providerC];

for (const family of BUILT_IN_FAMILIES) registerFamily(family);
