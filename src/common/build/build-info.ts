import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AppConfig } from '../../config/app-config';
import { utcTimestamp } from '../../core/build-stamp-rules';

/** Provenance of the running binary (docs/endpoints.md "Health document", docs/design/decisions.md §6). */
export interface BuildInfo {
  readonly version: string;
  readonly commit: string;
  readonly build_date: string;
  readonly go_version: string;
  readonly modified: boolean;
}

interface BuildStamp {
  version?: string;
  commit?: string;
  build_date?: string;
  modified?: boolean;
}

/** Written by `npm run build` (scripts/stamp-build.mjs) next to the compiled code: dist/build-info.json. */
export const BUILD_STAMP_PATH = path.resolve(__dirname, '..', '..', 'build-info.json');

function readStamp(stampPath: string): BuildStamp {
  try {
    return JSON.parse(fs.readFileSync(stampPath, 'utf8')) as BuildStamp;
  } catch {
    return {};
  }
}

/**
 * When this code was loaded: the build_date of an unbuilt run (sources transpiled at start-up),
 * so the field always keeps the contract's timestamp format.
 */
const LOADED_AT = utcTimestamp(new Date());

/** BUILD_* settings win, then the build stamp, then `devel` / `unknown` / the load time. */
export function resolveBuildInfo(overrides: AppConfig['buildOverrides'], stampPath = BUILD_STAMP_PATH): BuildInfo {
  const stamp = readStamp(stampPath);
  return {
    version: overrides.version ?? stamp.version ?? 'devel',
    commit: overrides.commit ?? stamp.commit ?? 'unknown',
    build_date: overrides.date ?? stamp.build_date ?? LOADED_AT,
    go_version: `node${process.versions.node}`,
    modified: stamp.modified ?? false,
  };
}

export const CONTRACT_VERSION = '2.0.0';
export const BUILD_INFO = Symbol('BUILD_INFO');
