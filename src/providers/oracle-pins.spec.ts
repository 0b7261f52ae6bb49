import { CLAUDE_CODE, CODEX, GEMINI_CLI } from '../../scripts/oracle/oracle-clis';
import { claimedVersionProblem, pinnedCapture } from '../../test/support/oracle-pins';
import { CODEX_CLI_VERSION } from './provider-a/codex-cli-version';
import { GEMINI_CLI_VERSION } from './provider-b/provider-b.constants';
import { FALLBACK_CLAUDE_CODE_VERSION } from './provider-c/provider-c.usage';

/**
 * The CLI versions the gateway sends upstream are the versions oracles/package.json pins, whose
 * captures the oracle specs compare its requests with: a re-pin without moving one of them fails
 * here, naming the constant and the command (docs/providers.md, "Re-pinning and re-capturing").
 */
describe('the CLI versions the gateway claims', () => {
  it.each([
    [CODEX, CODEX_CLI_VERSION, 'CODEX_CLI_VERSION', 'src/providers/provider-a/codex-cli-version.ts'],
    [GEMINI_CLI, GEMINI_CLI_VERSION, 'GEMINI_CLI_VERSION', 'src/providers/provider-b/provider-b.constants.ts'],
    [
      CLAUDE_CODE,
      FALLBACK_CLAUDE_CODE_VERSION,
      'FALLBACK_CLAUDE_CODE_VERSION',
      'src/providers/provider-c/provider-c.usage.ts',
    ],
  ] as const)('are the pins of oracles/package.json: %s', (cli, claimed, constant, file) => {
    expect(claimedVersionProblem(cli, claimed, constant, file)).toBe('');
  });

  it('names the command that captures the pinned version when a spec reads a capture it does not have', () => {
    expect(() => pinnedCapture(CODEX, '/nowhere/codex-0.0.1.gpt-5.5.capture.json')).toThrow(
      /codex-0\.0\.1\.gpt-5\.5\.capture\.json does not exist: oracles\/package\.json pins @openai\/codex \S+, whose captures were not taken\. Capture them with `npm run oracle:codex -- --capture`/,
    );
    expect(() => pinnedCapture(CLAUDE_CODE, '/nowhere/auth-status.json')).toThrow(
      '`npm run oracle:claude -- --capture`',
    );
  });

  it('says which constant to move and how to capture the pinned version when one is not the pin', () => {
    expect(claimedVersionProblem(CODEX, '0.0.1', 'CODEX_CLI_VERSION', 'codex-cli-version.ts')).toMatch(
      /^CODEX_CLI_VERSION \(codex-cli-version\.ts\) is 0\.0\.1, but oracles\/package\.json pins @openai\/codex \S+: set it to \S+ once .*`npm run oracle:codex -- --capture`/,
    );
  });
});
