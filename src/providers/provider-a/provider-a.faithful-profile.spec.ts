import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConfigError } from '../../config/app-config';
import { loadFaithfulProfile, parseFaithfulProfile, scaffoldForToday } from './provider-a.faithful-profile';

describe('provider_a faithful profile', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pa-profile-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('loads the built-in profile (also when the setting says "built-in")', () => {
    const profile = loadFaithfulProfile(undefined);
    expect(profile.instructions.length).toBeGreaterThan(20);
    expect(profile.scaffold).toHaveLength(1);
    expect(profile.include).toEqual(['reasoning.encrypted_content']);
    expect(loadFaithfulProfile('built-in')).toEqual(profile);
  });

  it('applies defaults and ignores model/reasoning/text keys', () => {
    expect(parseFaithfulProfile({ instructions: 'x', model: 'm', reasoning: {}, text: {} })).toEqual({
      instructions: 'x',
      tools: [],
      toolChoice: 'auto',
      parallelToolCalls: true,
      include: ['reasoning.encrypted_content'],
      scaffold: [],
    });
  });

  it('fails with a ConfigError naming PRIMARY_FAITHFUL_PROFILE for a missing, broken or invalid file', () => {
    const missing = path.join(dir, 'nope.json');
    expect(() => loadFaithfulProfile(missing)).toThrow(ConfigError);
    expect(() => loadFaithfulProfile(missing)).toThrow(
      /^invalid setting PRIMARY_FAITHFUL_PROFILE \/ --primary-faithful-profile: file not found: correct the path, or unset the setting for the built-in one \(.*nope\.json\)$/,
    );
    const broken = path.join(dir, 'broken.json');
    fs.writeFileSync(broken, '{');
    expect(() => loadFaithfulProfile(broken)).toThrow(
      /PRIMARY_FAITHFUL_PROFILE \/ --primary-faithful-profile: not readable JSON: Expected property name or '}' in JSON at position 1/,
    );
    expect(() => loadFaithfulProfile(dir)).toThrow(
      /PRIMARY_FAITHFUL_PROFILE \/ --primary-faithful-profile: is a directory, not a file \(EISDIR\)/,
    );
    const invalid = path.join(dir, 'invalid.json');
    fs.writeFileSync(invalid, JSON.stringify({ instructions: 'x', tools: 'no' }));
    expect(() => loadFaithfulProfile(invalid)).toThrow(
      /PRIMARY_FAITHFUL_PROFILE \/ --primary-faithful-profile: "tools" must be an array of objects/,
    );
  });

  it('refuses at startup a profile whose instructions are missing or not a string', () => {
    for (const document of [{ tools: [] }, { instructions: ['x'] }, { instructions: null }]) {
      const file = path.join(dir, 'no-instructions.json');
      fs.writeFileSync(file, JSON.stringify(document));
      expect(() => loadFaithfulProfile(file)).toThrow(ConfigError);
      expect(() => loadFaithfulProfile(file)).toThrow(
        /PRIMARY_FAITHFUL_PROFILE \/ --primary-faithful-profile: "instructions" must be a string \(.*no-instructions\.json\)$/,
      );
    }
  });

  it("puts today's date and the zone into the scaffold and edits nothing else", () => {
    const scaffold = [
      {
        type: 'message',
        role: 'developer',
        content: [{ type: 'input_text', text: 'a <current_date>old</current_date> b <timezone>Old/Zone</timezone> c' }],
      },
    ];
    const result = scaffoldForToday(scaffold, new Date('2026-04-05T12:00:00Z'), 'UTC');
    expect(result).toEqual([
      {
        type: 'message',
        role: 'developer',
        content: [
          { type: 'input_text', text: 'a <current_date>2026-04-05</current_date> b <timezone>UTC</timezone> c' },
        ],
      },
    ]);
    expect(scaffold[0].content[0].text).toContain('old');
  });
});
