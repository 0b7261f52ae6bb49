import * as path from 'node:path';
import { ConfigError } from '../../config/app-config';
import { flagOf } from '../../config/settings';
import { isJsonObject, type JsonObject } from '../../common/json';
import { JsonFileProblem, readJsonFile } from '../../common/json-file';

/** The faithful-mode profile (docs/upstream/provider-a.md §5.2); `model`, `reasoning`, `text` keys are ignored. */
export interface FaithfulProfile {
  readonly instructions: string;
  /** Responses-shape tools, sent as is. */
  readonly tools: readonly JsonObject[];
  readonly toolChoice: unknown;
  readonly parallelToolCalls: boolean;
  readonly include: readonly unknown[];
  /** Input items placed before the conversation. */
  readonly scaffold: readonly JsonObject[];
}

/** Our own short built-in profile; users point PRIMARY_FAITHFUL_PROFILE at one they captured. */
export const BUILT_IN_FAITHFUL_PROFILE_PATH = path.join(__dirname, 'provider-a.faithful-profile.json');

const SETTING = 'PRIMARY_FAITHFUL_PROFILE';
/** Validates a profile document; returns the problem text on failure. */
export function parseFaithfulProfile(document: unknown): FaithfulProfile | string {
  if (!isJsonObject(document)) return 'the profile must be a JSON object';
  const { instructions, tools, tool_choice: toolChoice, parallel_tool_calls: parallel, include, scaffold } = document;
  if (typeof instructions !== 'string') return '"instructions" must be a string';
  if (tools !== undefined && !(Array.isArray(tools) && tools.every(isJsonObject)))
    return '"tools" must be an array of objects';
  if (toolChoice !== undefined && typeof toolChoice !== 'string' && !isJsonObject(toolChoice))
    return '"tool_choice" must be a string or an object';
  if (parallel !== undefined && typeof parallel !== 'boolean') return '"parallel_tool_calls" must be a boolean';
  if (include !== undefined && !Array.isArray(include)) return '"include" must be an array';
  if (scaffold !== undefined && !(Array.isArray(scaffold) && scaffold.every(isJsonObject)))
    return '"scaffold" must be an array of objects';
  return {
    instructions,
    tools: tools ?? [],
    toolChoice: toolChoice ?? 'auto',
    parallelToolCalls: parallel ?? true,
    include: (include as unknown[] | undefined) ?? ['reasoning.encrypted_content'],
    scaffold: scaffold ?? [],
  };
}

/**
 * Reads the profile at startup; a missing or invalid file is a ConfigError naming the setting,
 * so the gateway fails to boot with one line instead of failing faithful requests later.
 */
export function loadFaithfulProfile(filePath: string | undefined): FaithfulProfile {
  // The settings table documents the default as the literal "built-in".
  const source = filePath === undefined || filePath === 'built-in' ? BUILT_IN_FAITHFUL_PROFILE_PATH : filePath;
  let document: unknown;
  try {
    document = readJsonFile(source);
  } catch (error) {
    if (!(error instanceof JsonFileProblem)) throw error;
    throw new ConfigError(`invalid setting ${SETTING} / ${flagOf(SETTING)}: ${error.message} (${source})`);
  }
  const profile = parseFaithfulProfile(document);
  if (typeof profile === 'string')
    throw new ConfigError(`invalid setting ${SETTING} / ${flagOf(SETTING)}: ${profile} (${source})`);
  return profile;
}

/** `YYYY-MM-DD` of `now` in `timeZone`. */
function isoDate(now: Date, timeZone: string): string {
  // en-CA formats dates as YYYY-MM-DD.
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(now);
}

/**
 * The scaffold with today's date inside `<current_date>…</current_date>` and the local zone
 * inside `<timezone>…</timezone>`; nothing else is edited.
 */
export function scaffoldForToday(scaffold: readonly JsonObject[], now: Date, timeZone: string): JsonObject[] {
  const date = isoDate(now, timeZone);
  const edit = (value: unknown): unknown => {
    if (typeof value === 'string') {
      return value
        .replace(/(<current_date>)[\s\S]*?(<\/current_date>)/g, `$1${date}$2`)
        .replace(/(<timezone>)[\s\S]*?(<\/timezone>)/g, `$1${timeZone}$2`);
    }
    if (Array.isArray(value)) return value.map(edit);
    if (isJsonObject(value)) return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, edit(entry)]));
    return value;
  };
  return scaffold.map((item) => edit(item) as JsonObject);
}

/** The local IANA zone name (e.g. `Europe/Berlin`). */
export function localTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}
