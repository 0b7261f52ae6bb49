/**
 * The Codex CLI release whose wire provider_a reproduces and the oracle tests verify
 * (oracles/package.json `@openai/codex`, test/fixtures/codex-oracle/). PROVIDER_A_CLIENT_VERSION
 * may claim a newer one (docs/providers.md "Client version"); the wire stays this release's.
 * Moving to a new CLI release is the pin, a new capture (`npm run oracle:codex -- --capture`) and
 * this line; src/providers/oracle-pins.spec.ts fails while this line is not the pin.
 * The settings table shows it as that setting's default.
 */
export const CODEX_CLI_VERSION = '0.171.0';
