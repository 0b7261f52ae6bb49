// Lets plain `node` run the project's TypeScript without a build step: the demo, the benchmark,
// the config-doc generator and the child-process e2e tests (a fresh clone has no dist/). Each
// transpiled file is cached on disk under a hash of its source, so the many short-lived gateways
// a test file spawns pay the TypeScript cost once instead of ~2 s each. Type errors are not
// checked here; `npm test` runs `tsc --noEmit` for that.
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const CACHE_DIR = path.join(os.tmpdir(), 'gateway-ts-cache');
let ts;
let optionsKey;

function compilerOptions() {
  ts ??= require('typescript');
  return {
    module: ts.ModuleKind.CommonJS,
    target: ts.ScriptTarget.ES2022,
    experimentalDecorators: true,
    emitDecoratorMetadata: true,
    esModuleInterop: true,
    resolveJsonModule: true,
    sourceMap: false,
    inlineSourceMap: true,
  };
}

function cacheFile(filename, source) {
  // The TypeScript version is part of the key without loading the compiler on a cache hit.
  optionsKey ??= require('typescript/package.json').version + '/commonjs-es2022-decorators-v1';
  const digest = crypto
    .createHash('sha256')
    .update(optionsKey)
    .update('\0')
    .update(filename)
    .update('\0')
    .update(source)
    .digest('hex');
  return path.join(CACHE_DIR, `${digest}.js`);
}

require.extensions['.ts'] = function compileTypeScript(module, filename) {
  const source = fs.readFileSync(filename, 'utf8');
  const cached = cacheFile(filename, source);
  let output;
  try {
    output = fs.readFileSync(cached, 'utf8');
  } catch {
    output = transpile(source, filename);
    try {
      fs.mkdirSync(CACHE_DIR, { recursive: true });
      // Write then rename: gateways started in parallel never read a half-written file.
      const temporary = `${cached}.${process.pid}.${Date.now()}.tmp`;
      fs.writeFileSync(temporary, output);
      fs.renameSync(temporary, cached);
    } catch {
      // A read-only temp dir only costs speed.
    }
  }
  module._compile(output, filename);
};

function transpile(source, filename) {
  const options = compilerOptions();
  return ts.transpileModule(source, { compilerOptions: options, fileName: filename }).outputText;
}

// Resolution tries extensions in insertion order (.js, .json, .node, then ours), so
// `require('./provider-a.faithful-profile')` would load the JSON data file of the same name
// instead of the .ts module. Re-insert .json and .node after .ts: .js, .ts, .json, .node.
for (const extension of ['.json', '.node']) {
  const loader = require.extensions[extension];
  delete require.extensions[extension];
  require.extensions[extension] = loader;
}

// Every entry point registers the built-in families before anything reads them (src/families.ts);
// a TypeScript script run through this hook is an entry point too.
require('../src/families.ts');
