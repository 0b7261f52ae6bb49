import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The files below `directory` whose names `include` accepts, for specs that read the code itself.
 * Captured fixtures, installed packages and dot-folders are not the project's code and are skipped.
 */
export function sourceFilesBelow(directory: string, include: (name: string) => boolean): string[] {
  return fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory())
      return ['node_modules', '__fixtures__'].includes(entry.name) || entry.name.startsWith('.')
        ? []
        : sourceFilesBelow(full, include);
    return include(entry.name) ? [full] : [];
  });
}

/** A TypeScript file that is not a spec. */
export const isProductionTs = (name: string) => name.endsWith('.ts') && !name.endsWith('.spec.ts');
