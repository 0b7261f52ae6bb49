import type { ErrorSpec } from './error-codes';
import { CORE_ERROR_CODES } from './error-codes';
import type { Family } from './family';

/**
 * The families the gateway knows, by id. The built-in ones come from `src/families.ts` the first
 * time anything asks (so every entry point and spec sees them without an import of its own); a
 * test adds one of its own with `registerFamily` before it builds the app.
 */
let registered: Map<string, Family> | undefined;
/** The rows of the codes the registered families declare (`Family.errors`), by code. */
const familyErrors = new Map<string, ErrorSpec>();

function known(): Map<string, Family> {
  if (registered === undefined) {
    registered = new Map();
    // Loaded on first use rather than imported: src/families.ts imports every family folder,
    // which import the shared layers that import this file.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { BUILT_IN_FAMILIES } = require('../families') as typeof import('../families');
    for (const family of BUILT_IN_FAMILIES) add(registered, family);
  }
  return registered;
}

function add(into: Map<string, Family>, family: Family): void {
  if (!/^[a-z][a-z0-9_]{0,31}$/.test(family.id))
    throw new Error(`family id "${family.id}" must be lower-case letters, digits and _ (it is a metric label)`);
  if (into.has(family.id)) throw new Error(`family "${family.id}" is registered twice`);
  const errors = Object.entries(family.errors ?? {});
  for (const [code] of errors)
    if (Object.hasOwn(CORE_ERROR_CODES, code) || familyErrors.has(code))
      throw new Error(`family "${family.id}" declares error code "${code}", which another table already has`);
  into.set(family.id, family);
  for (const [code, spec] of errors) familyErrors.set(code, spec);
}

/** Adds a family beside the built-in ones. */
export function registerFamily(family: Family): void {
  add(known(), family);
}

/** Every registered family, built-in ones first, in registration order. */
export function families(): readonly Family[] {
  return [...known().values()];
}

export function familyIds(): string[] {
  return [...known().keys()];
}

export function isFamilyId(value: unknown): value is string {
  return typeof value === 'string' && known().has(value);
}

/** The row of an error code a registered family declares, if one does. */
export function familyErrorSpec(code: string): ErrorSpec | undefined {
  known();
  return familyErrors.get(code);
}

/** The family of an id the gateway already checked (a configured or resolved one). */
export function familyOf(id: string): Family {
  const family = known().get(id);
  if (!family) throw new Error(`no family "${id}" is registered`);
  return family;
}
