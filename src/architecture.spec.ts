import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
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
