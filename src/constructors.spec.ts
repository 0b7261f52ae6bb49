import * as path from 'node:path';
import * as ts from 'typescript';
import { isProductionTs, sourceFilesBelow } from '../test/support/source-files';

/**
 * Nothing happens while Nest builds the application (docs/architecture.md "Lifecycle"): the
 * constructor of a module, provider or controller in src/ only stores what it is given and builds
 * plain objects; timers and file reads start in Nest's lifecycle hooks. Read from the code with
 * the TypeScript compiler and its type checker: every call a constructor (or a field initializer)
 * makes is resolved to its declaration and followed into src/, so a timer or a file read reached
 * through helpers, `new` of other classes and methods of other objects counts too. Functions only
 * defined there (callbacks, handlers) run later and are not followed.
 */
const SRC = __dirname;

/** Timers, and node:fs in its sync, callback and promise forms. */
const EFFECTS = new Set([
  'setInterval',
  'setTimeout',
  'setImmediate',
  'readFileSync',
  'readFile',
  'statSync',
  'stat',
  'lstatSync',
  'lstat',
  'existsSync',
  'readdirSync',
  'readdir',
  'openSync',
  'open',
  'watch',
  'watchFile',
  'accessSync',
  'access',
  'realpathSync',
]);

/** Classes Nest builds while it wires the application: modules, providers and controllers. */
const NEST_DECORATORS = new Set(['Injectable', 'Controller', 'Module']);

function isNestClass(node: ts.ClassLikeDeclaration): boolean {
  return (ts.getDecorators(node) ?? []).some((decorator) => {
    const call = decorator.expression;
    const name = ts.isCallExpression(call) ? call.expression : call;
    return ts.isIdentifier(name) && NEST_DECORATORS.has(name.text);
  });
}

const isOurs = (file: ts.SourceFile) => !file.isDeclarationFile && !file.fileName.includes('/node_modules/');

/** What runs when `node` runs: its statements and expressions, without the bodies of functions it only defines. */
function callsIn(node: ts.Node): Array<ts.CallExpression | ts.NewExpression> {
  const calls: Array<ts.CallExpression | ts.NewExpression> = [];
  const visit = (child: ts.Node): void => {
    if (ts.isCallExpression(child) || ts.isNewExpression(child)) calls.push(child);
    if (
      ts.isArrowFunction(child) ||
      ts.isFunctionExpression(child) ||
      ts.isFunctionDeclaration(child) ||
      ts.isClassLike(child)
    )
      return;
    ts.forEachChild(child, visit);
  };
  if (ts.isCallExpression(node) || ts.isNewExpression(node)) calls.push(node);
  ts.forEachChild(node, visit);
  return calls;
}

function calleeName(call: ts.CallExpression | ts.NewExpression): string | undefined {
  const callee = call.expression;
  if (ts.isIdentifier(callee)) return callee.text;
  if (ts.isPropertyAccessExpression(callee)) return callee.name.text;
  return undefined;
}

/** The bodies that run for `new` of a class: its field initializers and its constructor's body. */
function constructionOf(declaration: ts.ClassLikeDeclaration): ts.Node[] {
  return declaration.members.flatMap((member): ts.Node[] => {
    if (ts.isPropertyDeclaration(member) && member.initializer && !ts.isArrowFunction(member.initializer))
      return [member.initializer];
    if (ts.isConstructorDeclaration(member) && member.body) return [member.body];
    return [];
  });
}

/** The class a `new` expression builds, through imports. */
function classOf(checker: ts.TypeChecker, expression: ts.Expression): ts.ClassLikeDeclaration | undefined {
  let symbol = checker.getSymbolAtLocation(expression);
  if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
  const declaration = symbol?.valueDeclaration;
  return declaration && ts.isClassLike(declaration) ? declaration : undefined;
}

/** Finds the effects `roots` run, as call chains, following calls into src/ through the checker. */
function effectsOf(checker: ts.TypeChecker, roots: readonly ts.Node[], label: string): string[] {
  const found: string[] = [];
  const seen = new Set<ts.Node>();
  const walk = (node: ts.Node, chain: string): void => {
    if (seen.has(node)) return;
    seen.add(node);
    for (const call of callsIn(node)) {
      const name = calleeName(call) ?? '(call)';
      if (ts.isNewExpression(call)) {
        const created = classOf(checker, call.expression);
        if (created && isOurs(created.getSourceFile()))
          constructionOf(created).forEach((body) => walk(body, `${chain} → new ${name}`));
        continue;
      }
      const declaration = checker.getResolvedSignature(call)?.getDeclaration() as ts.Declaration | undefined;
      const file = declaration?.getSourceFile();
      if (!declaration || !file || !isOurs(file)) {
        if (EFFECTS.has(name)) found.push(`${chain} → ${name}`);
        continue;
      }
      const step = `${chain} → ${name}`;
      if (
        (ts.isFunctionDeclaration(declaration) ||
          ts.isMethodDeclaration(declaration) ||
          ts.isArrowFunction(declaration) ||
          ts.isFunctionExpression(declaration)) &&
        declaration.body
      )
        walk(declaration.body, step);
    }
  };
  roots.forEach((root) => walk(root, label));
  return found;
}

function programOf(files: readonly string[]): ts.Program {
  const configFile = ts.findConfigFile(path.dirname(SRC), ts.sys.fileExists, 'tsconfig.json')!;
  const { config } = ts.readConfigFile(configFile, ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, path.dirname(configFile));
  return ts.createProgram(files, { ...options, noEmit: true });
}

/** Every Nest class of the program's own files, with what its construction calls into. */
function effectsAtConstruction(program: ts.Program): string[] {
  const checker = program.getTypeChecker();
  return program
    .getSourceFiles()
    .filter(isOurs)
    .flatMap((file) => {
      const classes: ts.ClassLikeDeclaration[] = [];
      const visit = (node: ts.Node): void => {
        if (ts.isClassLike(node) && isNestClass(node)) classes.push(node);
        ts.forEachChild(node, visit);
      };
      visit(file);
      return classes.flatMap((declaration) =>
        effectsOf(checker, constructionOf(declaration), `new ${declaration.name?.text ?? '(class)'}`).map(
          (chain) => `${path.relative(SRC, file.fileName)}: ${chain}`,
        ),
      );
    });
}

describe('construction', () => {
  it('starts no timer and reads no file while Nest builds a module, provider or controller of src/', () => {
    const program = programOf(sourceFilesBelow(SRC, isProductionTs));
    expect(effectsAtConstruction(program)).toEqual([]);
  });

  it('would see a timer or a file read at construction, directly, through a helper or another class', () => {
    const host = ts.createCompilerHost({});
    const probe = [
      "import * as fs from 'node:fs';",
      'declare function Injectable(): ClassDecorator;',
      'function load(file: string) { return fs.readFileSync(file); }',
      'class Ticker { private readonly timer = setInterval(() => undefined, 1000); }',
      'class Store { read() { return fs.statSync("x"); } }',
      '@Injectable() class Direct { constructor() { setTimeout(() => undefined, 1); } }',
      '@Injectable() class Helper { private readonly text = load("x"); }',
      '@Injectable() class Other { constructor(store: Store) { new Ticker(); store.read(); } }',
      '@Injectable() class Deferred { later = () => setTimeout(() => undefined, 1); constructor() { const f = () => load("x"); void f; } }',
      '@Injectable() class Hooked { onModuleInit() { load("x"); } }',
    ].join('\n');
    const probeFile = path.join(SRC, '__probe__.ts');
    const readFile = host.readFile.bind(host);
    const fileExists = host.fileExists.bind(host);
    host.readFile = (name) => (name === probeFile ? probe : readFile(name));
    host.fileExists = (name) => name === probeFile || fileExists(name);
    const program = ts.createProgram(
      [probeFile],
      { types: ['node'], experimentalDecorators: true, noEmit: true },
      host,
    );
    expect(effectsAtConstruction(program)).toEqual([
      '__probe__.ts: new Direct → setTimeout',
      '__probe__.ts: new Helper → load → readFileSync',
      '__probe__.ts: new Other → new Ticker → setInterval',
      '__probe__.ts: new Other → read → statSync',
    ]);
  });
});
