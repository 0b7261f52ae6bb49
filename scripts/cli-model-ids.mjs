#!/usr/bin/env node
// Prints, as JSON, the model ids the installed oracle CLIs know themselves (docs/providers.md
// "Where the provider_b and provider_c lists come from"):
//
//   - Gemini CLI: the `VALID_GEMINI_MODELS` set of its core `config/models.ts`, read from the
//     bundled JavaScript of @google/gemini-cli (the core package is bundled into it), and the
//     model aliases of the same file (`GEMINI_MODEL_ALIAS_*`: `pro`, `flash`, …);
//   - Claude Code: the model table compiled into the native `claude` binary (records
//     `{id:"claude-…",family:"…",display_name:"…",…}`), read from the platform package, with what
//     each record says of the model's limits (below), and its list of model aliases (the array
//     literal that holds `"opusplan"`).
//
// Of each Claude record: `first_party_id`, the id the CLI sends for it to Anthropic's API (its
// `provider_ids.first_party`, e.g. `claude-haiku-4-5-20251001`, which `--model` also takes);
// `context_window`, its `context.window`, the window the CLI gives the plain id (a model the
// table marks `native_1m` has 1M there; a `[1m]` suffix or beta opts other models into their
// `maximum_window`, which is not read); `max_output_tokens`, its `max_output_tokens.default`,
// the `max_tokens` the CLI sends; `max_output_tokens_upper`, its `max_output_tokens.upper`, as
// far as CLAUDE_CODE_MAX_OUTPUT_TOKENS in the CLI's environment can raise it. A field the record
// lacks is left out (the CLI then uses its built-in defaults).
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

/** Claude Code: the `{id, family, display_name, …}` records of the binary's model table. */
function claudeModels() {
  const wrapper = path.join(modules, '@anthropic-ai', 'claude-code');
  const platformDir =
    option('--claude-package') ??
    path.join(modules, '@anthropic-ai', `claude-code-${process.platform}-${process.arch}`);
  const binary = path.join(platformDir, 'claude');
  /** id → where its record starts in the binary. */
  const heads = new Map();
  // The binary is hundreds of MiB: scanned in slices that overlap by more than one record head.
  const pattern = /\{id:"(claude-[a-z0-9-]+)",family:"([a-z]+)",display_name:"([^"]*)"/g;
  // The alias list: `["sonnet","opus",…,"opus[1m]",…,"opusplan"]`.
  const aliasList = /=\[((?:"[a-z0-9[\]]+",)*"opusplan"(?:,"[a-z0-9[\]]+")*)\]/g;
  const aliases = new Set();
  const fd = fs.openSync(binary, 'r');
  let records;
  try {
    const size = fs.fstatSync(fd).size;
    const slice = 16 * 1024 * 1024;
    const overlap = 4096;
    const buffer = Buffer.alloc(slice + overlap);
    for (let offset = 0; offset < size; offset += slice) {
      const read = fs.readSync(fd, buffer, 0, slice + overlap, offset);
      const text = buffer.toString('latin1', 0, read);
      for (const match of text.matchAll(pattern)) heads.set(match[1], offset + match.index);
      for (const match of text.matchAll(aliasList)) {
        for (const alias of match[1].matchAll(/"([^"]+)"/g)) aliases.add(alias[1]);
      }
    }
    records = [...heads.values()].map((at) => claudeRecord(fd, at));
  } finally {
    fs.closeSync(fd);
  }
  if (records.length === 0) throw new Error(`no model table found in ${binary}`);
  if (aliases.size === 0) throw new Error(`no model alias list found in ${binary}`);
  return {
    version: readJson(path.join(platformDir, 'package.json')).version,
    wrapper_version: fs.existsSync(wrapper) ? readJson(path.join(wrapper, 'package.json')).version : undefined,
    source: `${path.basename(platformDir)}/claude (model table records {id, family, display_name, provider_ids, context, max_output_tokens})`,
    models: records.sort((left, right) => (left.id < right.id ? -1 : 1)),
    aliases: [...aliases].sort(),
  };
}

/**
 * One record of the table, read at `at`: it ends where the next record starts or the table's
 * `aliases` section does. Its nested objects (`provider_ids`, `context`, `max_output_tokens`) hold
 * no braces of their own, so each is read as `name:{…}`.
 */
function claudeRecord(fd, at) {
  const buffer = Buffer.alloc(16 * 1024);
  const text = buffer.toString('latin1', 0, fs.readSync(fd, buffer, 0, buffer.length, at));
  const ends = [text.indexOf('{id:"claude-', 1), text.indexOf('],aliases:{')].filter((index) => index > 0);
  if (ends.length === 0)
    throw new Error(`the model table record at byte ${at} has no end within ${buffer.length} bytes`);
  const record = text.slice(0, Math.min(...ends));
  const [, id, family, displayName] = /^\{id:"([^"]+)",family:"([^"]+)",display_name:"([^"]*)"/.exec(record);
  const object = (name) => new RegExp(`[{,]${name}:\\{([^{}]*)\\}`).exec(record)?.[1];
  const number = (body, name) => {
    const value = body === undefined ? undefined : new RegExp(`(?:^|,)${name}:([0-9.e]+)(?:,|$)`).exec(body)?.[1];
    if (value === undefined) return undefined;
    if (!Number.isInteger(Number(value))) throw new Error(`${id}: ${name} is not a whole number: ${value}`);
    return Number(value);
  };
  const context = object('context');
  const output = object('max_output_tokens');
  return {
    id,
    family,
    display_name: displayName,
    first_party_id: /(?:^|,)first_party:"([^"]+)"/.exec(object('provider_ids') ?? '')?.[1],
    context_window: number(context, 'window'),
    max_output_tokens: number(output, 'default'),
    max_output_tokens_upper: number(output, 'upper'),
  };
}

process.stdout.write(`${JSON.stringify({ 'gemini-cli': geminiModels(), 'claude-code': claudeModels() }, null, 2)}\n`);
