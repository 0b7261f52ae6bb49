import { CODEX_PIN } from '../../../test/support/oracle-pins';
import { acceptEncoding, codexClient, runtimeDecoders } from './provider-a.client';

describe('the Codex client the gateway claims (docs/providers.md "Client version")', () => {
  it('claims the pinned CLI version by default, in the user agent of both modes', () => {
    const client = codexClient();
    expect(client.version).toBe(CODEX_PIN);
    expect(client.userAgentMinimal).toBe(`codex_exec/${CODEX_PIN} (api wrapper) unknown (codex_exec; ${CODEX_PIN})`);
    expect(client.userAgentFaithful).toBe(
      `codex_exec/${CODEX_PIN} (Mac OS 26.2.0; arm64) unknown (codex_exec; ${CODEX_PIN})`,
    );
  });

  it('claims the configured version instead when one is given', () => {
    expect(codexClient('0.172.0-alpha.1').userAgentMinimal).toBe(
      'codex_exec/0.172.0-alpha.1 (api wrapper) unknown (codex_exec; 0.172.0-alpha.1)',
    );
  });

  it.each([
    [{ zlibZstd: true, undici: '7.11.0' }, 'zstd,gzip'],
    [{ zlibZstd: true, undici: '8.0.1' }, 'zstd,gzip'],
    [{ zlibZstd: true, undici: '7.10.0' }, 'gzip'],
    [{ zlibZstd: true, undici: '6.21.2' }, 'gzip'],
    [{ zlibZstd: false, undici: '7.16.0' }, 'gzip'],
    [{ zlibZstd: false, undici: undefined }, 'gzip'],
  ])('accepts zstd only where fetch can decode it: %j → %s', (decoders, expected) => {
    expect(acceptEncoding(decoders)).toBe(expected);
  });

  it("advertises what this very Node's fetch decodes", () => {
    expect(codexClient().acceptEncoding).toBe(acceptEncoding(runtimeDecoders()));
    expect(codexClient().acceptEncoding).toMatch(/gzip$/);
  });
});
