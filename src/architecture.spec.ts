import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Layering rules of style.md §8, checked on the sources: only src/config reads process.env;
 * providers never import the HTTP-facing layers; adapters never import each other; common/
 * never imports feature modules.
 */
const SRC = __dirname;

function sourceFiles(directory: string): string[] {
  return fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return entry.name === '__fixtures__' ? [] : sourceFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [full] : [];
  });
}

const files = sourceFiles(SRC).map((file) => ({ file: path.relative(SRC, file), text: fs.readFileSync(file, 'utf8') }));

function importsOf(file: string, text: string): string[] {
  const directory = path.dirname(path.join(SRC, file));
  return [...text.matchAll(/from '(\.[^']+)'/g)].map((match) => path.relative(SRC, path.resolve(directory, match[1])));
}

describe('source layering', () => {
  it('reads process.env only in src/config', () => {
    const offenders = files.filter(({ file, text }) => !file.startsWith('config/') && /process\.env/.test(text)).map(({ file }) => file);
    expect(offenders).toEqual([]);
  });

  it('keeps providers free of chat, structured, queue-HTTP and Express imports', () => {
    const offenders = files
      .filter(({ file }) => file.startsWith('providers/'))
      .flatMap(({ file, text }) => [
        ...importsOf(file, text).filter((target) => /^(chat|structured|health|models\/models\.controller)/.test(target)).map((target) => `${file} → ${target}`),
        ...(/from 'express'/.test(text) ? [`${file} → express`] : []),
      ]);
    expect(offenders).toEqual([]);
  });

  it('never lets one adapter import another', () => {
    const offenders = files
      .filter(({ file }) => /^providers\/provider-[abc]\//.test(file))
      .flatMap(({ file, text }) => {
        const own = file.split('/')[1];
        return importsOf(file, text)
          .filter((target) => /^providers\/provider-[abc]\//.test(target) && target.split('/')[1] !== own)
          .map((target) => `${file} → ${target}`);
      });
    expect(offenders).toEqual([]);
  });

  it('keeps common/ independent of feature modules', () => {
    const offenders = files
      .filter(({ file }) => file.startsWith('common/'))
      .flatMap(({ file, text }) => importsOf(file, text).filter((target) => /^(chat|structured|providers|queue|health|models)\//.test(target)).map((target) => `${file} → ${target}`));
    expect(offenders).toEqual([]);
  });
});
