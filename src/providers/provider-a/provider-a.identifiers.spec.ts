import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  InstallationIds,
  newTurnId,
  normalizeCallId,
  sessionIdForChat,
  structuredPromptCacheKey,
  windowIdFor,
} from './provider-a.identifiers';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('provider_a identifiers', () => {
  it('derives the session id from the chat key as in the reference example', () => {
    expect(sessionIdForChat('chat:header:x-conversation-id:conv-42')).toBe('47b61fd1-c0eb-3d05-2adc-5c4396baffee');
  });

  it('gives the same chat the same session id and different chats different ones', () => {
    expect(sessionIdForChat('chat:a')).toBe(sessionIdForChat('chat:a'));
    expect(sessionIdForChat('chat:a')).not.toBe(sessionIdForChat('chat:b'));
  });

  it('uses a different seed for the structured cache key', () => {
    const key = structuredPromptCacheKey('caller\nop\nabc');
    expect(key).toMatch(UUID);
    expect(key).not.toBe(structuredPromptCacheKey('caller\nop\nabd'));
    expect(key).not.toBe(sessionIdForChat('caller\nop\nabc'));
  });

  it('makes a fresh UUIDv7 turn id each time', () => {
    const first = newTurnId();
    expect(first).toMatch(UUID);
    expect(first[14]).toBe('7');
    expect(newTurnId()).not.toBe(first);
  });

  it('formats the window id', () => {
    expect(windowIdFor('s')).toBe('s:0');
  });

  it('normalizes call ids over 64 characters to their SHA-256 hex and keeps shorter ones', () => {
    expect(normalizeCallId('call_' + 'a'.repeat(70))).toBe(
      '04ce2191371fcc8c505c461d9b417d038242cec75f94e2ba6a9b85851d8e949d',
    );
    expect(normalizeCallId('x'.repeat(64))).toBe('x'.repeat(64));
  });

  it('reads installation_id once per home and otherwise uses one random id per process (one InstallationIds per adapter)', () => {
    const ids = new InstallationIds();
    const installationIdFor = (codexHome: string) => ids.for(codexHome);
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'pa-ids-'));
    const other = fs.mkdtempSync(path.join(os.tmpdir(), 'pa-ids-'));
    const third = fs.mkdtempSync(path.join(os.tmpdir(), 'pa-ids-'));
    try {
      fs.writeFileSync(path.join(home, 'installation_id'), ' install-test-1 \n');
      expect(installationIdFor(home)).toBe('install-test-1');
      fs.writeFileSync(path.join(home, 'installation_id'), 'changed');
      expect(installationIdFor(home)).toBe('install-test-1');
      const generated = installationIdFor(other);
      expect(generated).toMatch(UUID);
      expect(installationIdFor(third)).toBe(generated);
      expect(fs.existsSync(path.join(other, 'installation_id'))).toBe(false);
    } finally {
      for (const dir of [home, other, third]) fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
