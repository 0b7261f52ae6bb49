// Lets plain `node` run the project's TypeScript (demo, benchmark) without a build step:
// each .ts file is transpiled on load with the TypeScript compiler already in devDependencies.
// Type errors are not checked here; `npm test` runs `tsc --noEmit` for that.
'use strict';
const fs = require('node:fs');
const ts = require('typescript');

const compilerOptions = {
  module: ts.ModuleKind.CommonJS,
  target: ts.ScriptTarget.ES2022,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  esModuleInterop: true,
  resolveJsonModule: true,
  sourceMap: false,
  inlineSourceMap: true,
};

require.extensions['.ts'] = function compileTypeScript(module, filename) {
  const source = fs.readFileSync(filename, 'utf8');
  const { outputText } = ts.transpileModule(source, { compilerOptions, fileName: filename });
  module._compile(outputText, filename);
};

// Resolution tries extensions in insertion order (.js, .json, .node, then ours), so
// `require('./provider-a.faithful-profile')` would load the JSON data file of the same name
// instead of the .ts module. Re-insert .json and .node after .ts: .js, .ts, .json, .node.
for (const extension of ['.json', '.node']) {
  const loader = require.extensions[extension];
  delete require.extensions[extension];
  require.extensions[extension] = loader;
}
