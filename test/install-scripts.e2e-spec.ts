import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO_ROOT } from './support/child-gateway';

/**
 * The install-script policy (docs/deployment.md "Runtime", "Install scripts"): package.json's
 * allowScripts names every dependency the lock marks as having an install script, and the project's
 * .npmrc makes any other one an install error, so `npm ci` on a fresh clone prints no
 * install-scripts warning and never runs a script nobody reviewed.
 */
const read = (relative: string) => fs.readFileSync(path.join(REPO_ROOT, relative), 'utf8');

describe('the install-script policy (docs/deployment.md "Install scripts")', () => {
  const allowScripts =
    (JSON.parse(read('package.json')) as { allowScripts?: Record<string, boolean> }).allowScripts ?? {};
  /** A policy key's package name: `name` or `name@range`, scoped names included. */
  const nameOf = (key: string) => key.replace(/(?<=.)@.*$/, '');

  it('names every dependency of the lock that has an install script', () => {
    const lock = JSON.parse(read('package-lock.json')) as {
      packages: Record<string, { hasInstallScript?: boolean; version?: string }>;
    };
    const named = new Set(Object.keys(allowScripts).map(nameOf));
    const withScripts = Object.entries(lock.packages)
      .filter(([, entry]) => entry.hasInstallScript === true)
      .map(([location]) => location.replace(/^.*node_modules\//, ''));
    expect(withScripts.filter((name) => !named.has(name))).toEqual([]);
  });

  it('makes an unreviewed install script an error, and documents every entry', () => {
    expect(read('.npmrc')).toMatch(/^strict-allow-scripts=true$/m);
    const docs = read('docs/deployment.md');
    for (const [key, allowed] of Object.entries(allowScripts)) {
      expect(docs).toContain(`"${key}": ${String(allowed)}`);
    }
  });
});
