import { familyIds, familyOf, isFamilyId } from '../core/family-registry';
import type { ProviderId } from '../core/provider-id';
import { VERBOSITIES } from '../core/resolved-model';
import { quoted } from '../core/quoted';

/*
 * The rules one row of a catalog file (a family's rows file, or GATEWAY_MODEL_CATALOG) must meet,
 * checked at startup: a row that breaks one would be listed and then fail, or be sent upstream
 * wrong, on every request for it (docs/providers.md "Model ids").
 */

/**
 * The efforts a family takes on every model (its `catalog.acceptedEfforts`, with its CLI-only
 * modes); undefined when it declares none, and then a row's effort is held only to the row's list.
 */
function familyEfforts(provider: ProviderId): readonly string[] | undefined {
  const catalog = familyOf(provider).catalog;
  if (catalog?.acceptedEfforts === undefined) return undefined;
  return [...catalog.acceptedEfforts, ...Object.keys(catalog.cliOnlyEfforts ?? {})];
}

/** A `<family>/…` id is that family's passthrough: a row of that name would take it over. */
function passthroughPrefix(id: string): string | undefined {
  const slash = id.indexOf('/');
  return slash > 0 && isFamilyId(id.slice(0, slash)) ? id.slice(0, slash + 1) : undefined;
}

/**
 * What is wrong with a row (worded to follow `models[<index>] (id "…") `), or undefined. Checks
 * the shape of every field, then that the id is one the gateway can be asked for, and that the
 * effort and verbosity are values the row's model and family take.
 */
export function catalogRowProblem(row: unknown): string | undefined {
  if (typeof row !== 'object' || row === null) return 'must be an object';
  const entry = row as Record<string, unknown>;
  if (typeof entry.id !== 'string' || entry.id.trim() === '') return 'needs a non-empty "id"';
  if (!isFamilyId(entry.provider)) return `has an unknown "provider" (allowed: ${familyIds().join(', ')})`;
  if (typeof entry.upstream_model !== 'string' || entry.upstream_model === '')
    return 'needs a non-empty "upstream_model"';
  for (const key of ['reasoning_effort', 'verbosity']) {
    if (entry[key] !== null && typeof entry[key] !== 'string') return `"${key}" must be a string or null`;
  }
  const efforts = entry.reasoning_efforts;
  if (
    efforts !== undefined &&
    (!Array.isArray(efforts) ||
      efforts.length === 0 ||
      !efforts.every((value) => typeof value === 'string' && value !== ''))
  ) {
    return '"reasoning_efforts" must be a non-empty array of strings';
  }
  if (entry.service_tier !== null && entry.service_tier !== 'priority')
    return '"service_tier" must be "priority" or null';
  if (typeof entry.structured !== 'boolean') return '"structured" must be true or false';
  return (
    idProblem(entry.id) ??
    effortProblem(entry.provider, entry.reasoning_effort as string | null, efforts as string[] | undefined) ??
    verbosityProblem(entry.verbosity as string | null)
  );
}

/** Ids are matched exactly, and a `<family>/` prefix belongs to the passthrough ids. */
function idProblem(id: string): string | undefined {
  if (id !== id.trim()) return 'has whitespace around its "id": write the id without it (ids are matched exactly)';
  const prefix = passthroughPrefix(id);
  if (prefix !== undefined)
    return `has an "id" starting with "${prefix}", which names ${prefix.slice(0, -1)}'s passthrough ids (the model after the slash goes upstream as written): name the row without that prefix`;
  return undefined;
}

/** The row's effort is one of its own list, and its list (or, without one, its effort) one its family takes. */
function effortProblem(
  provider: ProviderId,
  effort: string | null,
  efforts: readonly string[] | undefined,
): string | undefined {
  const taken = familyEfforts(provider);
  const foreign = taken && efforts?.find((value) => !taken.includes(value));
  if (taken && foreign !== undefined)
    return `has ${quoted(foreign)} in "reasoning_efforts", not an effort ${provider} takes (${taken.join(', ')}): remove it`;
  if (effort === null) return undefined;
  if (efforts !== undefined && !efforts.includes(effort))
    return `has "reasoning_effort" ${quoted(effort)}, not one of its "reasoning_efforts" (${efforts.join(', ')}): use one of them, or null for the upstream's default`;
  if (efforts === undefined && taken && !taken.includes(effort))
    return `has "reasoning_effort" ${quoted(effort)}, not an effort ${provider} takes (${taken.join(', ')}): use one of them, or null for the upstream's default`;
  return undefined;
}

/** A row's verbosity is one a request may give (docs/chat.md "Request"), or null. */
function verbosityProblem(verbosity: string | null): string | undefined {
  if (verbosity === null || (VERBOSITIES as readonly string[]).includes(verbosity)) return undefined;
  return `has "verbosity" ${quoted(verbosity)}, not one of ${VERBOSITIES.join(', ')}: use one of them, or null for the upstream's default`;
}
