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
  new RegExp(`\\b(?:log|diagnostic|logUpstream)\\(\\s*(?:'(?:info|warn|error|debug)'\\s*,\\s*)?'${NAME}'`, 'g'),
  new RegExp(`\\b(?:event|fields)\\(\\s*'${NAME}'`, 'g'),
  new RegExp(`\\bevent = [^;]*\\? '${NAME}' : '${NAME}'`, 'g'),
];
const PER_FAMILY = /`\$\{[^}]*provider\}(_[a-z0-9_]+)`/g;

/** Event name → the files that log it. */
function loggedEvents(): Map<string, string[]> {
  const events = new Map<string, string[]>();
  const add = (name: string, file: string) => events.set(name, [...(events.get(name) ?? []), path.relative(SRC, file)]);
  for (const file of sourceFiles(SRC)) {
    if (file.endsWith('event-words.ts')) continue;
    const text = fs.readFileSync(file, 'utf8');
    // Only files that log: a file without a logger call names events for other reasons (stream event types).
    if (!/\b(?:logger|log|diagnostic|logUpstream)\b/.test(text)) continue;
    for (const pattern of PATTERNS) {
      for (const match of text.matchAll(pattern)) for (const name of match.slice(1)) if (name) add(name, file);
    }
    for (const match of text.matchAll(PER_FAMILY)) for (const id of familyIds()) add(`${id}${match[1]}`, file);
  }
  return events;
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
