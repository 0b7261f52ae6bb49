import type { Family } from './core/family';
import { providerA } from './providers/provider-a/provider-a.family';
import { providerB } from './providers/provider-b/provider-b.family';
import { providerC } from './providers/provider-c/provider-c.family';

/**
 * The built-in families, in their default order: a family is its folder under src/providers/
 * plus its one entry here (docs/architecture.md "Adding a family").
 */
export const BUILT_IN_FAMILIES: readonly Family[] = [providerA, providerB, providerC];
