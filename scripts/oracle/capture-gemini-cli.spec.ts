import * as fs from 'node:fs';
import type { GeminiCapture } from './capture-gemini-cli';
import { diffGeminiCaptures, geminiFixture, geminiVersionDifferences } from './capture-gemini-cli';
import { GEMINI_CLI, pinnedVersion } from './oracle-clis';

// What `npm run oracle:gemini` and `npm run oracle:drift` compare for the Gemini CLI, on the
// capture of the pinned version (docs/providers.md, "Following the upstream CLIs").
const file = geminiFixture(pinnedVersion(GEMINI_CLI));
const source = 'gemini.capture.json';
/** The fixture, its requests typed loosely so that a test can edit them. */
interface EditableCapture extends GeminiCapture {
  scenarios: { name: string; exitCode: number | null; requests: Record<string, any>[] }[];
}
const read = (): EditableCapture => JSON.parse(fs.readFileSync(file, 'utf8')) as EditableCapture;

describe('the Gemini CLI oracle comparison', () => {
  it('shows no drift when the capture is compared with itself', () => {
    expect(diffGeminiCaptures(source, read(), read())).toEqual([]);
  });

  it('compares setup bodies by value: a new version in listExperiments shows', () => {
    const changed = read();
    const request = changed.scenarios[0].requests.find((entry) => entry.route === 'listExperiments')!;
    const before = request.body.metadata.ideVersion as string;
    request.body.metadata.ideVersion = '9.9.9';
    expect(diffGeminiCaptures(source, read(), changed)).toEqual([
      {
        where: `${source} · ${changed.scenarios[0].name}: POST /v1internal:listExperiments #1`,
        change: 'changed',
        key: 'body metadata.ideVersion',
        committed: [JSON.stringify(before)],
        fresh: ['"9.9.9"'],
      },
    ]);
  });

  it('compares generate bodies by value: another session or prompt id is no drift, a new field is', () => {
    const changed = read();
    const generate = changed.scenarios[0].requests.find((entry) => entry.route === 'streamGenerateContent')!;
    generate.body.user_prompt_id = '0b420db3-1d71-4f32-a847-b250cc06ea77';
    generate.body.request.session_id = '0b420db3-1d71-4f32-a847-b250cc06ea77';
    expect(diffGeminiCaptures(source, read(), changed)).toEqual([]);
    generate.body.request.labels = { session: 'x' };
    expect(diffGeminiCaptures(source, read(), changed)).toEqual([
      expect.objectContaining({ change: 'added', key: 'body request.labels.session', fresh: ['"x"'] }),
    ]);
  });

  it('shows the envelope model and the generation settings by value', () => {
    const changed = read();
    const generates = (scenario: string) =>
      changed.scenarios
        .find((entry) => entry.name === scenario)!
        .requests.filter((entry) => entry.route === 'streamGenerateContent');
    for (const generate of generates('gemini-3-text-turn')) {
      generate.body.model = 'gemini-3.5-flash';
      generate.body.request.generationConfig.thinkingConfig.thinkingLevel = 'LOW';
      generate.body.request.generationConfig.temperature = 0.5;
    }
    for (const generate of generates('discovered-project-tool-turn'))
      generate.body.request.generationConfig.thinkingConfig.thinkingBudget += 1;
    const keys = diffGeminiCaptures(source, read(), changed).map(
      (difference) => `${difference.where.split(' · ')[1].split(':')[0]} ${difference.key}`,
    );
    expect(keys).toEqual(
      expect.arrayContaining([
        'gemini-3-text-turn body model',
        'gemini-3-text-turn body request.generationConfig.thinkingConfig.thinkingLevel',
        'gemini-3-text-turn body request.generationConfig.temperature',
        'discovered-project-tool-turn body request.generationConfig.thinkingConfig.thinkingBudget',
      ]),
    );
  });

  it('shows no drift for the clock in a tool call id, which differs on every run', () => {
    const changed = read();
    const text = JSON.stringify(changed).replace(/list_directory_\d{13}_0/g, 'list_directory_1800000000000_0');
    expect(text).not.toEqual(JSON.stringify(read()));
    expect(diffGeminiCaptures(source, read(), JSON.parse(text) as EditableCapture)).toEqual([]);
  });

  it('shows a capture recorded by another version than the pinned one', () => {
    expect(geminiVersionDifferences(source, { ...read(), version: '0.60.0' }, pinnedVersion(GEMINI_CLI))).toEqual([
      expect.objectContaining({ where: source, committed: ['0.60.0'], fresh: [pinnedVersion(GEMINI_CLI)] }),
    ]);
    expect(geminiVersionDifferences(source, read(), pinnedVersion(GEMINI_CLI))).toEqual([]);
  });

  it('masks the Node version of x-goog-api-client and shows other header values', () => {
    const changed = read();
    for (const request of changed.scenarios[1].requests) request.headers['x-goog-api-client'] = 'gl-node/99.0.0';
    expect(diffGeminiCaptures(source, read(), changed)).toEqual([]);
    changed.scenarios[1].requests[0].headers['accept-encoding'] = 'zstd';
    expect(diffGeminiCaptures(source, read(), changed)).toEqual([
      expect.objectContaining({ change: 'changed', key: 'header accept-encoding', fresh: ['zstd'] }),
    ]);
  });

  it('shows a scenario whose exit code changed', () => {
    const changed = read();
    changed.scenarios[1] = { ...changed.scenarios[1], exitCode: 41 };
    expect(diffGeminiCaptures(source, read(), changed)).toEqual([
      expect.objectContaining({ key: 'exit code', committed: ['0'], fresh: ['41'] }),
    ]);
  });
});
