import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FakeCodeAssist } from './fake-provider-b';

/** Accessors of the running Code Assist fake and the current temp home (valid inside hooks and tests). */
export interface FakeProviderBHandle {
  fake(): FakeCodeAssist;
  home(): string;
}

export interface FakeProviderBOptions {
  readonly homePrefix: string;
  /**
   * `test` (default): a fresh temp home per test, removed after it. `suite`: one home for the
   * block, made before its tests (a gateway started in the spec's own `beforeAll` can use it).
   */
  readonly home?: 'test' | 'suite';
}

/**
 * Registers the hooks every provider_b spec needs in the enclosing describe block: one
 * `FakeCodeAssist` for all tests (closed after them), `reset()` before every test, and a temp
 * home. Hooks run in the order they are registered, so a spec registers the `afterAll` that
 * closes its gateway before calling this, and the `beforeAll` that starts it after.
 */
export function useFakeProviderB(options: FakeProviderBOptions): FakeProviderBHandle {
  let fake: FakeCodeAssist | undefined;
  let home: string | undefined;
  const makeHome = () => (home = fs.mkdtempSync(path.join(os.tmpdir(), options.homePrefix)));
  const removeHome = () => fs.rmSync(home!, { recursive: true, force: true });
  beforeAll(async () => {
    fake = await FakeCodeAssist.start();
    if (options.home === 'suite') makeHome();
  });
  afterAll(async () => {
    await fake?.close();
    if (options.home === 'suite') removeHome();
  });
  beforeEach(() => {
    fake!.reset();
    if (options.home !== 'suite') makeHome();
  });
  afterEach(() => {
    if (options.home !== 'suite') removeHome();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useFakeProviderB: the fake is used outside a hook or test');
    return value;
  };
  return { fake: () => started(fake), home: () => started(home) };
}
