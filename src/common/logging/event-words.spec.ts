import * as fs from 'node:fs';
import * as path from 'node:path';
import { familyIds } from '../../core/family-registry';
import { EVENT_WORDS, SENTENCE_EVENTS } from './event-words';

/**
 * Every event the gateway logs has words for a person at a terminal (event-words.ts). The source
 * is read as text: an `event: '…'` field, a snake_case message after a logger call's fields, the
 * event of a logging helper (`log('warn', 'queue_full')`), and a family's event built from its
 * id (`${provider}_auth_retry`).
 */
const SRC = path.resolve(__dirname, '..', '..');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(file);
    return file.endsWith('.ts') && !file.endsWith('.spec.ts') ? [file] : [];
  });
}

const NAME = '([a-z][a-z0-9]*(?:_[a-z0-9]+)+)';
const PATTERNS = [
  new RegExp(`\\bevent: '${NAME}'`, 'g'),
  new RegExp(`\\}\\s*,\\s*'${NAME}'\\s*[,)]`, 'g'),
  new RegExp(
    `\\b(?:log|diagnostic|logUpstream)(?:\\?\\.)?\\(\\s*(?:'(?:info|warn|error|debug)'\\s*,\\s*)?'${NAME}'`,
    'g',
  ),
  new RegExp(`\\b(?:event|fields)\\(\\s*'${NAME}'`, 'g'),
  new RegExp(`\\bevent = [^;]*\\? '${NAME}' : '${NAME}'`, 'g'),
];
const PER_FAMILY = /`\$\{[^}]*provider\}(_[a-z0-9_]+)`/g;

/**
 * The families a file's per-family event is logged for: those whose id is passed to one of the
 * file's classes (`new LoginTokenTurn('provider_a', …)`), else every family.
 */
function familiesOf(text: string, sources: ReadonlyMap<string, string>): string[] {
  const classes = [...text.matchAll(/\bexport class (\w+)/g)].map((match) => match[1]);
  const ids = familyIds().filter((id) =>
    [...sources.values()].some((source) => classes.some((name) => source.includes(`new ${name}('${id}'`))),
  );
  return ids.length > 0 ? ids : familyIds();
}

/** Event name → the files that log it. */
function loggedEvents(): Map<string, string[]> {
  const events = new Map<string, string[]>();
  const add = (name: string, file: string) => events.set(name, [...(events.get(name) ?? []), path.relative(SRC, file)]);
  const sources = new Map(sourceFiles(SRC).map((file) => [file, fs.readFileSync(file, 'utf8')]));
  for (const [file, text] of sources) {
    if (file.endsWith('event-words.ts')) continue;
    // Only files that log: a file without a logger call names events for other reasons (stream event types).
    if (!/\b(?:logger|log|diagnostic|logUpstream)\b/.test(text)) continue;
    for (const pattern of PATTERNS) {
      for (const match of text.matchAll(pattern)) for (const name of match.slice(1)) if (name) add(name, file);
    }
    for (const match of text.matchAll(PER_FAMILY))
      for (const id of familiesOf(text, sources)) add(`${id}${match[1]}`, file);
  }
  return events;
}

/** The Markdown pages of docs/, each as text. */
function docsPages(): Array<[string, string]> {
  const docs = path.resolve(SRC, '..', 'docs');
  return fs
    .readdirSync(docs, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => [`docs/${name}`, fs.readFileSync(path.join(docs, name), 'utf8')]);
}

describe('EVENT_WORDS', () => {
  const events = loggedEvents();

  it('finds the events of the source (the walk itself works)', () => {
    for (const name of [
      'gateway_listening',
      'provider_c_command_missing',
      'queue_full',
      'upstream_turn_failed',
      'structured_replay',
      'structured_canceled',
      'provider_b_auth_retry',
      'login_state',
    ]) {
      expect(events.has(name)).toBe(true);
    }
    expect(events.size).toBeGreaterThan(50);
  });

  it('names each family event only for the families that log it', () => {
    expect(events.has('provider_a_auth_retry')).toBe(true);
    // provider_c's CLI retries a refused token itself; the gateway has no LoginTokenTurn for it.
    expect(events.has('provider_c_auth_retry')).toBe(false);
  });

  it("has every event logged in src/ named in docs/ (endpoints.md's catalogue or a family's page)", () => {
    const pages = docsPages();
    const undocumented = [...events]
      .filter(([name]) => !pages.some(([, text]) => text.includes(`\`${name}\``)))
      .map(([name, files]) => `${name} (${files.join(', ')})`);
    expect(undocumented).toEqual([]);
  });

  it('has words only for events logged in src/', () => {
    expect(Object.keys(EVENT_WORDS).filter((name) => !events.has(name))).toEqual([]);
  });

  it('has words for every event logged in src/', () => {
    const without = [...events].filter(([name]) => EVENT_WORDS[name] === undefined && !SENTENCE_EVENTS.has(name));
    expect(without.map(([name, files]) => `${name} (${files.join(', ')})`)).toEqual([]);
  });

  it('says words, not the event name again', () => {
    for (const [name, words] of Object.entries(EVENT_WORDS)) {
      expect(words).not.toContain(name);
      expect(words.trim()).not.toBe('');
    }
  });
});
