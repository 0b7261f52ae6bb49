import * as fs from 'node:fs';
import type { GeminiCapture } from './capture-gemini-cli';
import { diffGeminiCaptures, geminiFixture } from './capture-gemini-cli';
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

  it('compares generate bodies by shape: other text is no drift, a new field is', () => {
    const changed = read();
    const generate = changed.scenarios[0].requests.find((entry) => entry.route === 'streamGenerateContent')!;
    generate.body.user_prompt_id = 'another-id';
    expect(diffGeminiCaptures(source, read(), changed)).toEqual([]);
    generate.body.request.labels = { session: 'x' };
    expect(diffGeminiCaptures(source, read(), changed)).toEqual([
      expect.objectContaining({ change: 'added', key: 'body request.labels.session', fresh: ['string'] }),
    ]);
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
