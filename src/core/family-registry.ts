import type { Family } from './family';

/**
 * The families the gateway knows, by id, in registration order. `src/families.ts` registers the
 * built-in ones when it is imported (every entry point and the Jest setup import it first); a test
 * adds one of its own before it builds the app.
 */
const registered = new Map<string, Family>();

/** Adds a family; its id must be new and fit a metric label. */
export function registerFamily(family: Family): void {
  if (!/^[a-z][a-z0-9_]{0,31}$/.test(family.id))
    throw new Error(`family id "${family.id}" must be lower-case letters, digits and _ (it is a metric label)`);
  if (registered.has(family.id)) throw new Error(`family "${family.id}" is registered twice`);
  for (const code of Object.keys(family.errors ?? {}))
    for (const other of registered.values())
      if (other.errors?.[code] !== undefined)
        throw new Error(`family "${family.id}" declares error code "${code}", which family "${other.id}" already has`);
  registered.set(family.id, family);
}

function known(): ReadonlyMap<string, Family> {
  if (registered.size === 0)
    throw new Error('no family is registered: import src/families.ts before reading families (the entry points do)');
  return registered;
}

/** Every registered family, built-in ones first. */
export function families(): readonly Family[] {
  return [...known().values()];
}

export function familyIds(): string[] {
  return [...known().keys()];
}

export function isFamilyId(value: unknown): value is string {
  return typeof value === 'string' && registered.has(value);
}

/** The family of an id the gateway already checked (a configured or resolved one). */
export function familyOf(id: string): Family {
  const family = known().get(id);
  if (!family) throw new Error(`no family "${id}" is registered`);
  return family;
}
