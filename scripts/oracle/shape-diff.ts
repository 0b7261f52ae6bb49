/**
 * The one comparison the oracle checks share (`npm run oracle:codex`, `npm run oracle:gemini`,
 * `npm run oracle:drift`; see docs/providers.md, "Following the upstream CLIs"): what a CLI sent or
 * printed is reduced to facts, a key with the set of values seen for it, and two runs are compared
 * fact by fact. A leaf is compared by value, because the gateway copies or reads the values
 * (`store`, `tool_choice`, a Gemini `thinkingLevel`, a Claude `api_error`), except what differs from
 * run to run by nature: VOLATILE_FIELDS are compared by JSON type only, and VOLATILE_TEXT masks
 * ids, clocks and durations inside a string before its value is compared.
 */

/** Facts about one thing (a request, a stream, a list): key → the values seen under it. */
export type Facts = Map<string, Set<string>>;

/** One difference between the committed fixture and a fresh run. */
export interface Difference {
  /** Which capture and which request / event / entry (e.g. `codex-0.169.0.gpt-5.5.capture.json · ws-message response.create #2`). */
  readonly where: string;
  readonly change: 'added' | 'removed' | 'changed';
  /** What differs (e.g. `header user-agent`, `body reasoning.effort`, `event stream_event/message_start ttft_ms`). */
  readonly key: string;
  /** The committed values (for `removed` and `changed`). */
  readonly committed?: readonly string[];
  /** The fresh values (for `added` and `changed`). */
  readonly fresh?: readonly string[];
}

/** Fields whose value is part of the shape: the kind of an object, not data it carries. */
const KIND_FIELDS = new Set(['type', 'subtype', 'role']);

/**
 * Fields whose value differs on every run of the same capture, compared by JSON type only (whether
 * they are there, and as what). A field is listed here only when its value says nothing about the
 * CLI's behaviour; ids are not listed, VOLATILE_TEXT masks them wherever they appear.
 */
export const VOLATILE_FIELDS: ReadonlySet<string> = new Set([
  // Claude Code's timings of a turn, measured on the machine that ran it.
  'duration_ms',
  'duration_api_ms',
  'ttft_ms',
  'ttft_stream_ms',
  'first_content_frame_ms',
  'time_to_request_ms',
  'thinking_duration_ms',
  // Claude Code's wait before a retry, which carries random jitter.
  'retry_delay_ms',
  // Claude Code's working folder and its socket: a fresh temporary folder, the process id.
  'cwd',
  'original_cwd',
  'messaging_socket_path',
  // A thinking block's signature: random bytes from the fake API.
  'signature',
]);

/**
 * Parts of a string that differ on every run, replaced by a placeholder before the value is
 * compared, so that the rest of the string still is: `""` against an id, a changed
 * `request_kind` inside Codex's turn metadata, or a new wording around an id all show.
 */
export const VOLATILE_TEXT: readonly { readonly pattern: RegExp; readonly mask: string }[] = [
  // Session, thread, turn, installation and item ids (also inside `msg_…`, `at_…` and JSON text).
  { pattern: /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, mask: '<uuid>' },
  // Random tokens: message and request ids (`msg_2dfc…`, `req_…`), signatures; twenty or more
  // letters and digits with at least one digit, so that words stay compared. Before the clock, so
  // that digits inside a token are never taken for one.
  { pattern: /(?=[A-Za-z+/]*\d)[A-Za-z0-9+/]{20,}/g, mask: '<token>' },
  // The clock: ISO timestamps, and Unix milliseconds (Codex's request start, Gemini's tool call ids).
  { pattern: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?/g, mask: '<time>' },
  { pattern: /(?<!\d)1\d{12}(?!\d)/g, mask: '<epoch-ms>' },
  // The recording fakes listen on a random loopback port, which a CLI names in its own messages.
  { pattern: /\b(127\.0\.0\.1|localhost):\d+/g, mask: '$1:<port>' },
  // Durations a CLI writes into its own messages ("first after 39 ms").
  { pattern: /\b\d+ ms\b/g, mask: '<n> ms' },
  // The Codex capture keeps the CLI's prose only as its length, which depends on the machine: the
  // environment context it sends names the temporary working folder.
  { pattern: /^<\d+ chars>$/, mask: '<prose>' },
];

/** `text` with every VOLATILE_TEXT part replaced by its placeholder. */
export function maskVolatile(text: string): string {
  return VOLATILE_TEXT.reduce((masked, { pattern, mask }) => masked.replace(pattern, mask), text);
}

export function addFact(facts: Facts, key: string, value: string): void {
  const values = facts.get(key);
  if (values) values.add(value);
  else facts.set(key, new Set([value]));
}

export function jsonType(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  return typeof value;
}

/** `values` (the default): each leaf by value, VOLATILE_FIELDS and VOLATILE_TEXT aside; `types`: JSON types only. */
export interface JsonFactOptions {
  readonly compare?: 'values' | 'types';
}

/**
 * Adds one fact per leaf of `value` under `prefix`: the path (`a.b[].c`) with the leaf's value (see
 * JsonFactOptions; a kind field keeps its value with `types` too). Array elements share one path,
 * `[]`, or `[<type>]` when the element is an object with a string `type`, so that items of
 * different kinds (a message, a function call) keep their own fields apart. Empty objects and arrays
 * are leaves too, so `{}` and `[]` are told from a missing key.
 */
export function addJsonFacts(facts: Facts, prefix: string, value: unknown, options: JsonFactOptions = {}): void {
  walk(facts, prefix, value, undefined, (options.compare ?? 'values') === 'values');
}

function walk(facts: Facts, path: string, value: unknown, field: string | undefined, byValue: boolean): void {
  if (Array.isArray(value)) {
    if (value.length === 0) addFact(facts, path, 'array');
    for (const element of value) walk(facts, `${path}${elementSegment(element)}`, element, field, byValue);
    return;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length === 0) addFact(facts, path, 'object');
    for (const [key, inner] of entries) walk(facts, childPath(path, key), inner, key, byValue);
    return;
  }
  addFact(facts, path, leafFact(value, field, byValue));
}

function leafFact(value: unknown, field: string | undefined, byValue: boolean): string {
  if (field !== undefined && KIND_FIELDS.has(field)) return JSON.stringify(value);
  if (!byValue || (field !== undefined && VOLATILE_FIELDS.has(field))) return jsonType(value);
  return JSON.stringify(typeof value === 'string' ? maskVolatile(value) : value);
}

/** `a.b`, or `b` at the root; a prefix ending in a space (`event text `) takes the key as it is. */
function childPath(path: string, key: string): string {
  return path === '' || path.endsWith(' ') ? `${path}${key}` : `${path}.${key}`;
}

function elementSegment(element: unknown): string {
  const kind =
    element !== null && typeof element === 'object' && !Array.isArray(element)
      ? (element as Record<string, unknown>).type
      : undefined;
  return typeof kind === 'string' ? `[${kind}]` : '[]';
}

/** Facts of one JSON value (see addJsonFacts). */
export function jsonFacts(value: unknown, options: JsonFactOptions = {}): Facts {
  const facts: Facts = new Map();
  addJsonFacts(facts, '', value, options);
  return facts;
}

/**
 * Header facts: every name with its value, except that a value carrying versions
 * (`codex_exec/0.169.0 (Debian …)`) keeps only those versions, since a new release announces
 * itself there and the rest describes the machine, and a value carrying an id, a token or JSON
 * keeps only its presence. With `allValues`, every value is compared whole (for CLIs whose headers
 * carry no ids). Node's own version is masked: it belongs to the machine, not to the CLI.
 */
export function headerFacts(
  headers: Readonly<Record<string, unknown>> | undefined,
  options: { readonly ignore?: ReadonlySet<string>; readonly allValues?: boolean } = {},
): Facts {
  const facts: Facts = new Map();
  for (const [name, raw] of Object.entries(headers ?? {})) {
    const lower = name.toLowerCase();
    if (options.ignore?.has(lower)) continue;
    const value = maskNodeVersion(String(raw));
    if (options.allValues) {
      addFact(facts, `header ${lower}`, value);
      continue;
    }
    const versions = versionsIn(value);
    addFact(facts, `header ${lower}`, versions.length > 0 ? versions.join(' ') : carriesId(value) ? 'present' : value);
  }
  return facts;
}

/** Whether a header value holds something that differs per run: an id, a token, a JSON document. */
function carriesId(value: string): boolean {
  return /[0-9a-f]{8}-[0-9a-f]{4}-|[A-Za-z0-9_-]{24,}|[{[]|<[a-z_]+>/i.test(value);
}

/** The `product/1.2.3` tokens of a header value, or the value itself when it is a bare version. */
export function versionsIn(value: string): string[] {
  if (/^v?\d+\.\d+(\.\d+)?([-+][\w.]+)?$/.test(value.trim())) return [value.trim()];
  return value.match(/[A-Za-z][\w.-]*\/v?\d+\.\d+(?:\.\d+)?[\w.+-]*/g) ?? [];
}

function maskNodeVersion(value: string): string {
  return value.replace(/\b((?:gl-)?node)\/v?\d+\.\d+\.\d+/gi, '$1/<node>');
}

/** What changed from `committed` to `fresh`, one Difference per key, in key order. */
export function diffFacts(where: string, committed: Facts, fresh: Facts): Difference[] {
  const keys = [...new Set([...committed.keys(), ...fresh.keys()])].sort();
  const differences: Difference[] = [];
  for (const key of keys) {
    const before = committed.get(key);
    const after = fresh.get(key);
    if (!after) differences.push({ where, change: 'removed', key, committed: sorted(before) });
    else if (!before) differences.push({ where, change: 'added', key, fresh: sorted(after) });
    else if (!sameSet(before, after))
      differences.push({ where, change: 'changed', key, committed: sorted(before), fresh: sorted(after) });
  }
  return differences;
}

/**
 * The difference a fixture makes when the CLI version it recorded is not the pinned one (a fixture
 * edited by hand, or captured with another CLI), or when it recorded none: the checks compare a
 * fresh run of the pin with it, which is only meaningful when both are the pin's.
 */
export function versionDifferences(where: string, recorded: readonly unknown[], pinned: string): Difference[] {
  const versions = [
    ...new Set(recorded.map((version) => (typeof version === 'string' ? version : JSON.stringify(version)))),
  ];
  if (versions.length > 0 && versions.every((version) => version === pinned)) return [];
  return [
    {
      where,
      change: 'changed',
      key: 'recorded CLI version (fixture → pin)',
      committed: versions.length > 0 ? versions.sort() : ['(none)'],
      fresh: [pinned],
    },
  ];
}

/** A request (or any recorded item) reduced for comparison: what it is, and its facts. */
export interface Recorded {
  /** What identifies it across runs, e.g. `http GET /backend-api/codex/models` or `ws-message response.create`. */
  readonly identity: string;
  readonly facts: Facts;
}

/**
 * Compares two recorded sequences: the n-th item of an identity in the fixture with the n-th of
 * the same identity in the fresh run (so one new request does not shift every later one), then
 * the unpaired items as added or removed.
 */
export function diffRecorded(source: string, committed: readonly Recorded[], fresh: readonly Recorded[]): Difference[] {
  const freshByIdentity = groupByIdentity(fresh);
  const committedByIdentity = groupByIdentity(committed);
  const differences: Difference[] = [];
  for (const [identity, items] of committedByIdentity) {
    const others = freshByIdentity.get(identity) ?? [];
    items.forEach((item, index) => {
      const where = `${source} · ${identity} #${index + 1}`;
      const other = others[index];
      if (other) differences.push(...diffFacts(where, item.facts, other.facts));
      else differences.push({ where, change: 'removed', key: 'request', committed: [identity] });
    });
  }
  for (const [identity, items] of freshByIdentity) {
    const known = committedByIdentity.get(identity)?.length ?? 0;
    items.slice(known).forEach((_item, offset) =>
      differences.push({
        where: `${source} · ${identity} #${known + offset + 1}`,
        change: 'added',
        key: 'request',
        fresh: [identity],
      }),
    );
  }
  return differences;
}

/** Keeps the first of items that are identical in identity and facts (a request the CLI repeats a timing-dependent number of times). */
export function distinctRecorded(items: readonly Recorded[]): Recorded[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const signature = `${item.identity}\n${JSON.stringify([...item.facts].map(([key, values]) => [key, sorted(values)]).sort())}`;
    if (seen.has(signature)) return false;
    seen.add(signature);
    return true;
  });
}

/**
 * Facts of a stream-json output (one JSON object per line, as `claude -p --output-format
 * stream-json` prints): per event kind (`type`, `/subtype` for system lines, `:event.type` for
 * stream events), every field path with its values (addJsonFacts). Lines that are not JSON are kept
 * as a fact of their own, so a CLI that starts printing text between events is seen.
 */
export function streamJsonFacts(text: string): Facts {
  const facts: Facts = new Map();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let event: unknown;
    try {
      event = JSON.parse(line);
    } catch {
      addFact(facts, 'line', 'not JSON');
      continue;
    }
    const kind = eventKind(event);
    addFact(facts, `event ${kind}`, 'present');
    addJsonFacts(facts, `event ${kind} `, event);
  }
  return facts;
}

export function eventKind(event: unknown): string {
  if (event === null || typeof event !== 'object' || Array.isArray(event)) return jsonType(event);
  const record = event as Record<string, unknown>;
  const inner = record.event as Record<string, unknown> | undefined;
  if (typeof record.subtype === 'string') return `${String(record.type)}/${record.subtype}`;
  if (inner && typeof inner === 'object' && typeof inner.type === 'string')
    return `${String(record.type)}:${inner.type}`;
  return String(record.type);
}

function groupByIdentity(items: readonly Recorded[]): Map<string, Recorded[]> {
  const groups = new Map<string, Recorded[]>();
  for (const item of items) groups.set(item.identity, [...(groups.get(item.identity) ?? []), item]);
  return groups;
}

function sorted(values: ReadonlySet<string> | undefined): string[] {
  return [...(values ?? [])].sort();
}

function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  return a.size === b.size && [...a].every((value) => b.has(value));
}
