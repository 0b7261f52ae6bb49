#!/usr/bin/env node
// Prints, as JSON, the model ids the installed oracle CLIs know themselves (docs/providers.md
// "Where the provider_b and provider_c lists come from"):
//
//   - Gemini CLI: the `VALID_GEMINI_MODELS` set of its core `config/models.ts`, read from the
//     bundled JavaScript of @google/gemini-cli (the core package is bundled into it), and the
//     model aliases of the same file (`GEMINI_MODEL_ALIAS_*`: `pro`, `flash`, …);
//   - Claude Code: the model table compiled into the native `claude` binary (records
//     `{id:"claude-…",family:"…",display_name:"…"`), read from the platform package, and its
//     list of model aliases (the array literal that holds `"opusplan"`).
//
// Both are read from the package files rather than by running the CLIs: neither prints its model
// list without a login and a network. Usage:
//
//   node scripts/cli-model-ids.mjs [--oracles <dir with node_modules>] [--claude-package <dir>]
//
// `--claude-package` points at an unpacked @anthropic-ai/claude-code-linux-x64 (or other
// platform) package, e.g. one from `npm pack`, to read another release than the pinned one.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function option(name) {
  const index = process.argv.indexOf(name);
  return index > 0 ? process.argv[index + 1] : undefined;
}

const oracles = path.resolve(option('--oracles') ?? path.join(ROOT, 'oracles'));
const modules = path.join(oracles, 'node_modules');
const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));

/** Gemini CLI: the string constants of `config/models.ts` named by `VALID_GEMINI_MODELS`. */
function geminiModels() {
  const packageDir = path.join(modules, '@google', 'gemini-cli');
  const bundle = path.join(packageDir, 'bundle');
  const marker = '// packages/core/src/config/models.ts';
  const file = fs
    .readdirSync(bundle)
    .filter((name) => name.endsWith('.js'))
    .sort()
    .map((name) => path.join(bundle, name))
    .find((candidate) => fs.readFileSync(candidate, 'utf8').includes(marker));
  if (!file) throw new Error(`no ${marker} in ${bundle}`);
  const text = fs.readFileSync(file, 'utf8');
  const start = text.indexOf(marker);
  const setStart = text.indexOf('var VALID_GEMINI_MODELS', start);
  const setEnd = text.indexOf(']);', setStart);
  if (setStart < 0 || setEnd < 0) throw new Error(`no VALID_GEMINI_MODELS in ${file}`);
  // `var NAME = "literal";` and `var NAME = OTHER;` before the set, in source order.
  const values = new Map();
  for (const match of text.slice(start, setStart).matchAll(/var (\w+) = (?:"([^"]*)"|(\w+));/g)) {
    const value = match[2] ?? values.get(match[3]);
    if (value !== undefined) values.set(match[1], value);
  }
  const members = [...text.slice(setStart, setEnd).matchAll(/^\s*(\w+),?$/gm)].map((match) => match[1]);
  const ids = [...new Set(members.map((name) => values.get(name)))].filter((id) => id && id !== 'none');
  const end = text.indexOf('\n// ', setEnd);
  const aliases = [
    ...text.slice(start, end < 0 ? undefined : end).matchAll(/var GEMINI_MODEL_ALIAS_\w+ = "([^"]+)";/g),
  ];
  return {
    version: readJson(path.join(packageDir, 'package.json')).version,
    source: `${path.relative(packageDir, file)} (${marker.slice(3)}: VALID_GEMINI_MODELS)`,
    models: ids.sort(),
    default_model: values.get('DEFAULT_GEMINI_MODEL'),
    aliases: aliases.map((match) => match[1]).sort(),
  };
}

/** Claude Code: the `{id, family, display_name}` records of the binary's model table. */
function claudeModels() {
  const wrapper = path.join(modules, '@anthropic-ai', 'claude-code');
  const platformDir =
    option('--claude-package') ??
    path.join(modules, '@anthropic-ai', `claude-code-${process.platform}-${process.arch}`);
  const binary = path.join(platformDir, 'claude');
  const records = new Map();
  // The binary is hundreds of MiB: scanned in slices that overlap by more than one record head.
  const pattern = /\{id:"(claude-[a-z0-9-]+)",family:"([a-z]+)",display_name:"([^"]*)"/g;
  // The alias list: `["sonnet","opus",…,"opus[1m]",…,"opusplan"]`.
  const aliasList = /=\[((?:"[a-z0-9[\]]+",)*"opusplan"(?:,"[a-z0-9[\]]+")*)\]/g;
  const aliases = new Set();
  const fd = fs.openSync(binary, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    const slice = 16 * 1024 * 1024;
    const overlap = 4096;
    const buffer = Buffer.alloc(slice + overlap);
    for (let offset = 0; offset < size; offset += slice) {
      const read = fs.readSync(fd, buffer, 0, slice + overlap, offset);
      for (const match of buffer.toString('latin1', 0, read).matchAll(pattern)) {
        records.set(match[1], { id: match[1], family: match[2], display_name: match[3] });
      }
      for (const match of buffer.toString('latin1', 0, read).matchAll(aliasList)) {
        for (const alias of match[1].matchAll(/"([^"]+)"/g)) aliases.add(alias[1]);
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  if (records.size === 0) throw new Error(`no model table found in ${binary}`);
  if (aliases.size === 0) throw new Error(`no model alias list found in ${binary}`);
  return {
    version: readJson(path.join(platformDir, 'package.json')).version,
    wrapper_version: fs.existsSync(wrapper) ? readJson(path.join(wrapper, 'package.json')).version : undefined,
    source: `${path.basename(platformDir)}/claude (model table records {id, family, display_name})`,
    models: [...records.values()].sort((left, right) => (left.id < right.id ? -1 : 1)),
    aliases: [...aliases].sort(),
  };
}

process.stdout.write(`${JSON.stringify({ 'gemini-cli': geminiModels(), 'claude-code': claudeModels() }, null, 2)}\n`);
