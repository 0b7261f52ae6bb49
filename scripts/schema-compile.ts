// What the largest schemas the structured bounds allow cost (docs/structured.md "Schema subset",
// docs/deployment.md "Memory budget"): for each shape, the time OutputValidator.prepare takes for a
// schema it has not seen (meta-schema check and compile, on the event loop), over distinct copies
// as a stream of one-off schemas sends them, and the heap one validator and a full validator cache
// keep once each validator has run. Wall time depends on the machine and its load; the main
// thread's CPU time (what the compile would take on an idle machine) and memory hardly do.
// Run: node --expose-gc -r ./scripts/register-ts.cjs scripts/schema-compile.ts [--runs 15]
import * as os from 'node:os';
import { OutputValidator, VALIDATOR_CACHE_CHARACTERS } from '../src/common/json-schema/output-validator';
import { MAX_SCHEMA_BYTES } from '../src/structured/structured-request.parser';
import { findSchemaViolations } from '../src/structured/schema-subset.walker';

type Schema = Record<string, unknown>;

const strict = (properties: Record<string, unknown>): Schema => ({
  type: 'object',
  additionalProperties: false,
  required: Object.keys(properties),
  properties,
});
const named = (count: number, node: (index: number) => unknown) =>
  Object.fromEntries(Array.from({ length: count }, (_, index) => [`p${index}`, node(index)]));
/** `levels` nested schemas around `leaf`, each made by `wrap`. */
const nested = (levels: number, leaf: Schema, wrap: (inner: Schema, level: number) => Schema) => {
  let schema = leaf;
  for (let level = 0; level < levels; level++) schema = wrap(schema, level);
  return schema;
};

/** The shapes at the node bound (1,000 with the root), 10 levels deep where they nest. */
const SHAPES: Record<string, () => Schema> = {
  'flat: 999 string properties': () => strict(named(999, () => ({ type: 'string' }))),
  'lists: 499 arrays of strings': () => strict(named(499, () => ({ type: 'array', items: { type: 'string' } }))),
  'arrays 10 deep: 99 chains': () =>
    strict(named(99, () => nested(9, { type: 'integer' }, (inner) => ({ type: 'array', items: inner, maxItems: 3 })))),
  'objects 10 deep: 99 chains': () =>
    strict(named(99, () => nested(9, { type: 'boolean' }, (inner, level) => strict({ [`level_${level}`]: inner })))),
  'enums: 1,000 values of 100 characters': () =>
    strict(
      named(10, (index) => ({
        type: 'string',
        enum: Array.from({ length: 100 }, (_, value) => `${index}-${value}-`.padEnd(100, 'v')),
      })),
    ),
};
/** What the bounds now refuse, for comparison: 7,700 string properties. */
const REFUSED = { 'refused: 7,700 string properties': () => strict(named(7700, () => ({ type: 'string' }))) };

/** Copy `index` of a shape: its own title, and descriptions up to the byte cap (they cost no code). */
function copy(make: () => Schema, index: number): Schema {
  const schema = { ...make(), title: `copy ${index}` };
  const room = MAX_SCHEMA_BYTES - Buffer.byteLength(JSON.stringify(schema)) - 40;
  return room > 0 ? { ...schema, description: 'd'.repeat(room) } : schema;
}

const exposed = (globalThis as { gc?: () => void }).gc;
if (!exposed) throw new Error('run with node --expose-gc');
const gc: () => void = exposed;
const runs = Number(process.argv[process.argv.indexOf('--runs') + 1]) || 15;
const MIB = 1024 * 1024;

function measure(label: string, make: () => Schema, withinBounds: boolean): void {
  const first = copy(make, 0);
  const violations = findSchemaViolations(first);
  if (withinBounds && violations.length > 0) throw new Error(`${label}: ${violations[0]}`);
  const validator = new OutputValidator();
  validator.prepare('warm-up', strict({ w: { type: 'string' } }));
  const times: number[] = [];
  const cpu: number[] = [];
  for (let index = 1; index <= (withinBounds ? runs : 3); index++) {
    const schema = copy(make, index);
    const startedAt = performance.now();
    const cpuBefore = process.threadCpuUsage();
    validator.prepare(`copy-${index}`, schema);
    const spent = process.threadCpuUsage(cpuBefore);
    times.push(performance.now() - startedAt);
    cpu.push((spent.user + spent.system) / 1000);
  }
  const ms = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const at = (value: number) => value.toFixed(0);
    return `${at(sorted[0])}/${at(sorted[sorted.length >> 1])}/${at(sorted.at(-1)!)} ms`;
  };
  const line = [label.padEnd(40), `${Buffer.byteLength(JSON.stringify(first))} B`.padEnd(10)];
  line.push(`compile (min/median/max) CPU ${ms(cpu)}, wall ${ms(times)}`);
  if (withinBounds) {
    // A cache filled by distinct copies, each having validated an answer (which compiles its bytecode).
    const cache = new OutputValidator();
    cache.prepare('warm-up', strict({ w: { type: 'string' } }));
    gc();
    const before = process.memoryUsage().heapUsed;
    let kept = 0;
    for (let index = 0; index < 30; index++) {
      const schema = copy(make, 100 + index);
      cache.prepare(`cache-${index}`, schema);
      cache.check(`cache-${index}`, schema, {});
      kept = (cache as unknown as { compiled: { size: number } }).compiled.size;
    }
    gc();
    const heap = (process.memoryUsage().heapUsed - before) / MIB;
    line.push(`; full cache: ${kept} validators, ${heap.toFixed(1)} MiB (${(heap / kept).toFixed(2)} MiB each)`);
  }
  console.log(line.join(''));
}

console.log(
  `Node ${process.version}, load ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} CPUs, cache budget ${VALIDATOR_CACHE_CHARACTERS / MIB} Mi characters`,
);
for (const [label, make] of Object.entries(SHAPES)) measure(label, make, true);
for (const [label, make] of Object.entries(REFUSED)) measure(label, make, false);
