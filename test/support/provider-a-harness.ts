import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FakeProviderA } from './fake-provider-a';

export interface FakeProviderAOptions {
  /** Prefix of the temp home directory (under `os.tmpdir()`). */
  homePrefix: string;
  /**
   * `test`: a fresh home for every test, removed after it (adapter specs that write a login per
   * test); `suite` (default): one home for the whole describe block, removed at its end.
   */
  homeScope?: 'test' | 'suite';
}

/** Accessors of the running fake and the current temp home (valid inside hooks and tests). */
export interface FakeProviderAHandle {
  fake(): FakeProviderA;
  home(): string;
}

/**
 * Registers the hooks every provider_a spec needs in the enclosing describe block: start one
 * `FakeProviderA` before all tests and close it after all, `reset()` it before every test, and
 * create/remove the temp home per test or per suite (`homeScope`).
 *
 * Call it BEFORE other hooks whose work must come first (Jest runs same-block hooks in
 * declaration order), e.g. register "close the gateways" `afterAll` before this so the gateways
 * stop before the fake does.
 */
export function useFakeProviderA(options: FakeProviderAOptions): FakeProviderAHandle {
  let fake: FakeProviderA | undefined;
  let home: string | undefined;
  const perTest = options.homeScope === 'test';
  const makeHome = () => (home = fs.mkdtempSync(path.join(os.tmpdir(), options.homePrefix)));
  const removeHome = () => fs.rmSync(home!, { recursive: true, force: true });

  beforeAll(async () => {
    fake = await FakeProviderA.start();
    if (!perTest) makeHome();
  });
  afterAll(async () => {
    await fake?.close();
    if (!perTest) removeHome();
  });
  beforeEach(() => {
    fake!.reset();
    if (perTest) makeHome();
  });
  if (perTest) afterEach(removeHome);

  return {
    fake: () => fake ?? failNotStarted(),
    home: () => home ?? failNotStarted(),
  };
}

function failNotStarted(): never {
  throw new Error('useFakeProviderA: the fake is used outside a hook or test');
}
