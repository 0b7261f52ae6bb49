import type { Family } from '../../src/core/family';

/**
 * A family of a unit spec: its id and only the parts the code under test reads, with a title,
 * CLI names and fix texts of its own. Whatever else the code reaches for is absent, so a spec
 * fails loudly if the code under test reads more than it says.
 */
export function partialFamily(parts: Pick<Family, 'id'> & Partial<Family>): Family {
  const family: Partial<Family> = {
    title: `${parts.id} (test)`,
    cliNames: [],
    fix: { cli: 'test CLI', login: 'none' },
    ...parts,
  };
  return family as Family;
}
