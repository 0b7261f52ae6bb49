import { sha256Hex } from '../../common/hashing';

/*
 * Client tool names ↔ names a backend accepts. Clients name tools freely (MCP names with dots,
 * slashes, spaces, a leading digit, over 64 characters), while each backend refuses the whole
 * request when one name breaks its function-name rule. Each family states its rule; the renaming
 * is the same for all of them.
 */

/** A backend's function-name rule, and what makes a name follow it. */
export interface ToolNameRule {
  /** The names the backend accepts as they are. */
  readonly valid: RegExp;
  /** One character the backend refuses anywhere in a name (a global pattern): each becomes `_`. */
  readonly badCharacter: RegExp;
  /** A first character the backend refuses, when its rule has one: such a name gets a leading `_`. */
  readonly badStart?: RegExp;
  /** The backend's maximum name length. */
  readonly maxLength: number;
}

/** Client tool name ↔ the name sent upstream, for one request. */
export interface ToolNameMap {
  /** The upstream name of a client name (unchanged when it is already valid). */
  toUpstream(clientName: string): string;
  /** The client's name of an upstream name (unchanged when it was never renamed). */
  toClient(upstreamName: string): string;
  /** How many client names had to be renamed. */
  readonly renamed: number;
}

const MCP_PREFIX = 'mcp__';
/** `_` + 8 hex characters of the original name's SHA-256: what makes a replacement name unique. */
const SUFFIX_LENGTH = 9;

/**
 * The readable part of a replacement name: refused characters become `_`, a refused first
 * character gets a `_` before it, and a long name keeps its `mcp__` prefix and its tail (the
 * tool's own name, which MCP clients put last: `mcp__<server>__<tool>`), else its head.
 */
function readablePart(name: string, rule: ToolNameRule): string {
  let sanitized = name.replace(rule.badCharacter, '_');
  if (sanitized === '') sanitized = 'tool';
  if (rule.badStart?.test(sanitized)) sanitized = `_${sanitized}`;
  const room = rule.maxLength - SUFFIX_LENGTH;
  if (sanitized.length <= room) return sanitized;
  if (sanitized.startsWith(MCP_PREFIX)) return MCP_PREFIX + sanitized.slice(-(room - MCP_PREFIX.length));
  return sanitized.slice(0, room);
}

/** The map of a request whose names all are valid: every name goes up and comes back as it is. */
const NAMES_AS_THEY_ARE: ToolNameMap = { toUpstream: (name) => name, toClient: (name) => name, renamed: 0 };

/**
 * Builds the renaming for one request's tool names under a backend's rule. Valid names are kept
 * as they are; an invalid one becomes `<readable part>_<8 hex of its SHA-256>`, which depends
 * only on the name itself (so the same tool gets the same upstream name on every turn of a chat,
 * the prompt cache still matches, and two names that read alike once sanitized stay distinct).
 * A clash with another name of the request (practically impossible) is resolved by hashing
 * again with a counter, visiting names in sorted order so the result stays deterministic.
 * Hand-written: no library implements this naming rule.
 */
export function buildToolNameMap(clientNames: Iterable<string>, rule: ToolNameRule): ToolNameMap {
  const names = [...new Set(clientNames)];
  // Nearly every request's names are valid (or it has none): then nothing is renamed, and the
  // shared map spares each request its maps and closures.
  if (names.every((name) => rule.valid.test(name))) return NAMES_AS_THEY_ARE;
  names.sort();
  const upstreamOf = new Map<string, string>();
  const clientOf = new Map<string, string>();
  const taken = new Set(names.filter((name) => rule.valid.test(name)));
  let renamed = 0;
  for (const name of names) {
    if (rule.valid.test(name)) continue;
    const readable = readablePart(name, rule);
    let candidate = '';
    for (let attempt = 0; candidate === '' || taken.has(candidate); attempt++) {
      candidate = `${readable}_${sha256Hex(attempt === 0 ? name : `${name}#${attempt}`).slice(0, SUFFIX_LENGTH - 1)}`;
    }
    taken.add(candidate);
    upstreamOf.set(name, candidate);
    clientOf.set(candidate, name);
    renamed++;
  }
  return {
    toUpstream: (name) => upstreamOf.get(name) ?? name,
    toClient: (name) => clientOf.get(name) ?? name,
    renamed,
  };
}
