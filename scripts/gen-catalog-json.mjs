#!/usr/bin/env node
// Writes src/models/catalog.json, the built-in model catalog as one file, from each built-in
// family's own rows file (src/providers/provider-x/provider-x.catalog.json), which is what the
// gateway reads. The single file is the template for a GATEWAY_MODEL_CATALOG file and what
// scripts and specs read.
//
//   npm run catalog:json                          rewrite src/models/catalog.json
//   node scripts/gen-catalog-json.mjs --check     exit 1 when the file is out of date
//
// The TypeScript is loaded through scripts/register-ts.cjs (transpile on require): no build needed.
import * as fs from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
require('./register-ts.cjs');
const { BUILT_IN_CATALOG_PATH, builtInCatalogFile } = require('../src/models/model-catalog.ts');

const text = builtInCatalogFile();
if (process.argv.includes('--check')) {
  if (fs.readFileSync(BUILT_IN_CATALOG_PATH, 'utf8') !== text) {
    process.stderr.write('src/models/catalog.json is out of date: run npm run catalog:json\n');
    process.exit(1);
  }
} else {
  fs.writeFileSync(BUILT_IN_CATALOG_PATH, text);
  process.stdout.write('wrote src/models/catalog.json\n');
}
