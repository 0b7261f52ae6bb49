import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FakeCodeAssist } from './fake-provider-b';

/** Accessors of the running Code Assist fake and the current temp home (valid inside hooks and tests). */
export interface FakeProviderBHandle {
  fake(): FakeCodeAssist;
  home(): string;
}

/**
 * Registers the hooks a provider_b spec needs in the enclosing describe block: one
 * `FakeCodeAssist` for all tests (closed after them), `reset()` before every test, and a fresh
 * temp home per test, removed after it.
 */
export function useFakeProviderB(options: { homePrefix: string }): FakeProviderBHandle {
  let fake: FakeCodeAssist | undefined;
  let home: string | undefined;
  beforeAll(async () => {
    fake = await FakeCodeAssist.start();
  });
  afterAll(async () => {
    await fake?.close();
  });
  beforeEach(() => {
    fake!.reset();
    home = fs.mkdtempSync(path.join(os.tmpdir(), options.homePrefix));
  });
  afterEach(() => fs.rmSync(home!, { recursive: true, force: true }));
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useFakeProviderB: the fake is used outside a hook or test');
    return value;
  };
  return { fake: () => started(fake), home: () => started(home) };
}
