import * as zlib from 'node:zlib';
import { CODEX_CLI_VERSION } from './codex-cli-version';
import { CODEX_ORIGINATOR } from './provider-a.constants';

/**
 * Who the gateway says it is to the Codex backend: the Codex CLI version it claims (the model
 * list's `client_version` and the User-Agent; the backend gates models by it) and the encodings
 * its HTTP requests accept (docs/providers.md "Client version").
 */
export interface CodexClient {
  /** PROVIDER_A_CLIENT_VERSION: the pinned CLI's version unless an operator claims a newer one. */
  readonly version: string;
  /** Minimal mode says honestly that it is a wrapper, in the CLI's format. */
  readonly userAgentMinimal: string;
  /** Faithful mode claims the Mac the faithful profile describes. */
  readonly userAgentFaithful: string;
  /** `accept-encoding` of the model-list GET and the SSE POST. */
  readonly acceptEncoding: string;
}

/** `<originator>/<version> (<os>; <arch>) <terminal> (<originator>; <version>)`, as the CLI builds it. */
const userAgent = (version: string, platform: string) =>
  `${CODEX_ORIGINATOR}/${version} (${platform}) unknown (${CODEX_ORIGINATOR}; ${version})`;

export function codexClient(version: string = CODEX_CLI_VERSION): CodexClient {
  return {
    version,
    userAgentMinimal: userAgent(version, 'api wrapper'),
    userAgentFaithful: userAgent(version, 'Mac OS 26.2.0; arm64'),
    acceptEncoding: acceptEncoding(runtimeDecoders()),
  };
}

/** What the running Node can decode in a `fetch` answer. */
export interface RuntimeDecoders {
  /** `zlib.createZstdDecompress` exists (Node >= 22.15 / 23.8). */
  readonly zlibZstd: boolean;
  /** The version of the undici behind the global `fetch` (`process.versions.undici`). */
  readonly undici: string | undefined;
}

export function runtimeDecoders(): RuntimeDecoders {
  return {
    zlibZstd: typeof (zlib as { createZstdDecompress?: unknown }).createZstdDecompress === 'function',
    undici: process.versions.undici,
  };
}

/**
 * The CLI sends `accept-encoding: zstd,gzip`. `fetch` decodes an answer by its
 * `content-encoding` itself, gzip always, zstd only from undici 7.11 on and only when zlib has
 * zstd; advertising an encoding it cannot decode would hand the parser compressed bytes. So zstd
 * is claimed only where both hold (Node 24 and later), and gzip alone elsewhere (Node 20 and 22).
 * The egress proxy's undici (a dependency, >= 7.11) decodes whatever the global one does.
 */
export function acceptEncoding(decoders: RuntimeDecoders): string {
  const [major, minor] = (decoders.undici ?? '0.0').split('.').map(Number);
  const fetchDecodesZstd = major > 7 || (major === 7 && minor >= 11);
  return decoders.zlibZstd && fetchDecodesZstd ? 'zstd,gzip' : 'gzip';
}
