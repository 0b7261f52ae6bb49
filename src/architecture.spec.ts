import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import * as ts from 'typescript';
import { isProductionTs, sourceFilesBelow } from '../test/support/source-files';

/**
 * The layering of src/ (.dependency-cruiser.cjs, docs/architecture.md "Layers"), checked by
 * dependency-cruiser on the resolved import graph: any file or folder cycle and any forbidden
 * edge fails `npm test`. A second run over a small broken tree proves the rules can fail.
 */
const ROOT = path.resolve(__dirname, '..');
const CONFIG = path.join(ROOT, '.dependency-cruiser.cjs');
// The package's own command, as npm links it (its file inside the package is the package's business).
const DEPCRUISE = path.join(ROOT, 'node_modules', '.bin', 'depcruise');

interface Violation {
  readonly rule: { readonly name: string };
  readonly from: string;
  readonly to: string;
  readonly cycle?: readonly { readonly name: string }[];
}

/** Cruises `src` under `cwd` with the project's rules; depcruise exits non-zero on errors, so read its JSON either way. */
async function violationsIn(cwd: string): Promise<string[]> {
  const output = await promisify(execFile)(
    process.execPath,
    [DEPCRUISE, 'src', '--config', CONFIG, '--output-type', 'json'],
    {
      cwd,
      maxBuffer: 64 * 1024 * 1024,
    },
  ).catch((error: { stdout?: string; stderr?: string }) => ({
    stdout: error.stdout ?? '',
    stderr: error.stderr ?? '',
  }));
  // No report at all means depcruise itself failed: show why rather than a JSON parse error.
  if (output.stdout === '') throw new Error(`depcruise wrote no report: ${output.stderr}`);
  const result = JSON.parse(output.stdout) as { summary: { violations: Violation[] } };
  return result.summary.violations.map(({ rule, from, to, cycle }) =>
    cycle ? `${rule.name}: ${from} → ${cycle.map((step) => step.name).join(' → ')}` : `${rule.name}: ${from} → ${to}`,
  );
}

/**
 * What each Nest module of src/ imports of the project's own modules, by short name (`Metrics` for
 * MetricsModule): the identifiers ending in `Module` in its `imports` (in `@Module(…)` or the
 * object a `static forRoot` returns) that the file imports from a relative path. The app module,
 * the root of the tree, is not one of them.
 */
function projectModuleImports(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of sourceFilesBelow(__dirname, (name) => name.endsWith('.module.ts'))) {
    const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const relative = new Set<string>();
    for (const statement of source.statements)
      if (
        ts.isImportDeclaration(statement) &&
        ts.isStringLiteral(statement.moduleSpecifier) &&
        statement.moduleSpecifier.text.startsWith('.')
      )
        statement.importClause?.namedBindings?.forEachChild((binding) => relative.add(binding.getText(source)));
    for (const statement of source.statements) {
      if (!ts.isClassDeclaration(statement) || !statement.name || statement.name.text === 'AppModule') continue;
      const names = new Set<string>();
      const visit = (node: ts.Node, inImports: boolean) => {
        if (inImports && ts.isIdentifier(node) && relative.has(node.text) && node.text.endsWith('Module'))
          names.add(node.text.replace(/Module$/, ''));
        const imports = ts.isPropertyAssignment(node) && node.name.getText(source) === 'imports';
        node.forEachChild((child) => visit(child, inImports || imports));
      };
      visit(statement, false);
      if (/^\s*@Module\(/m.test(statement.getText(source)) || names.size > 0)
        found.set(statement.name.text, [...names].sort());
    }
  }
  return found;
}

/** The lines of docs/architecture.md's "Module map" block that name a module: its name, and the modules it says it imports. */
function documentedModules(): Map<string, string[]> {
  const page = fs.readFileSync(path.join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const block = /## Module map\n+```\n([\s\S]*?)\n```/.exec(page)?.[1] ?? '';
  const modules = new Map<string, string[]>();
  for (const line of block.split('\n')) {
    // A module's own line starts with its name (after the tree's lines); other lines only mention one.
    const name = /^[│├└─\s]*([A-Z]\w*Module)\b/.exec(line)?.[1];
    if (!name || name === 'AppModule') continue;
    const imports = /\bimports ([A-Z]\w*(?:, [A-Z]\w*)*)/.exec(line)?.[1];
    modules.set(name, imports ? imports.split(', ').sort() : []);
  }
  return modules;
}

describe('docs/architecture.md "Module map"', () => {
  it('names every module of src/ with exactly the project modules it imports', () => {
    const actual = projectModuleImports();
    // The walk itself works: a module known to import four.
    expect(actual.get('ChatModule')).toEqual(['Metrics', 'Models', 'Providers', 'Queue']);
    expect(Object.fromEntries(documentedModules())).toEqual(Object.fromEntries(actual));
  });
});

describe('source layering', () => {
  jest.setTimeout(60_000);

  it('has no file or folder cycle and no forbidden import (dependency-cruiser)', async () => {
    expect(await violationsIn(ROOT)).toEqual([]);
  });

  it('fails on a folder cycle, on core importing anything, on the queue or a login importing an adapter, and across families', async () => {
    const tree = fs.mkdtempSync(path.join(os.tmpdir(), 'layering-'));
    try {
      const write = (file: string, text: string) => {
        fs.mkdirSync(path.dirname(path.join(tree, file)), { recursive: true });
        fs.writeFileSync(path.join(tree, file), text);
      };
      write('tsconfig.json', JSON.stringify({ compilerOptions: { module: 'commonjs', strict: true } }));
      write('src/core/vocabulary.ts', "export type { Slot } from '../queue/slot';\n");
      write('src/queue/slot.ts', "import type { Adapter } from '../providers/adapter';\nexport type Slot = Adapter;\n");
      write(
        'src/providers/adapter.ts',
        'import type { Slot } from "../queue/slot";\nexport type Adapter = { slot?: Slot };\n',
      );
      write(
        'src/accounts/provider-a/login.ts',
        "import type { Adapter } from '../../providers/adapter';\nexport type Login = Adapter;\n",
      );
      write(
        'src/accounts/provider-b/login.ts',
        "import type { Login as A } from '../provider-a/login';\nexport type Login = A;\n",
      );
      const found = await violationsIn(tree);
      expect(found).toEqual(
        expect.arrayContaining([
          'core-imports-nothing: src/core/vocabulary.ts → src/queue/slot.ts',
          'queue-stays-below-accounts: src/queue/slot.ts → src/providers/adapter.ts',
          'accounts-stay-below-providers: src/accounts/provider-a/login.ts → src/providers/adapter.ts',
          'families-never-import-each-other: src/accounts/provider-b/login.ts → src/accounts/provider-a/login.ts',
          expect.stringMatching(/^no-module-cycle: /),
          expect.stringMatching(/^no-folder-cycle: src\/(queue|providers) → /),
        ]),
      );
    } finally {
      fs.rmSync(tree, { recursive: true, force: true });
    }
  });

  // Not an import, so not dependency-cruiser's job: a plain text check is exact here.
  it('reads process.env only in src/config', () => {
    const offenders = sourceFilesBelow(__dirname, isProductionTs)
      .filter((file) => !path.relative(__dirname, file).startsWith(`config${path.sep}`))
      .filter((file) => /process\.env/.test(fs.readFileSync(file, 'utf8')))
      .map((file) => path.relative(__dirname, file));
    expect(offenders).toEqual([]);
  });

  // A family is its folder (docs/architecture.md "How to add a family"): the shared layers never name one, not even in a comment.
  it('names no family in src/core or src/chat', () => {
    const offenders = ['core', 'chat']
      .flatMap((folder) => sourceFilesBelow(path.join(__dirname, folder), isProductionTs))
      .filter((file) => /provider_[abc]/.test(fs.readFileSync(file, 'utf8')))
      .map((file) => path.relative(__dirname, file));
    expect(offenders).toEqual([]);
  });
});
