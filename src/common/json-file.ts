import * as fs from 'node:fs';
import { errnoOf } from './errno';
import { gatewayUser } from './gateway-user';

/** A JSON file a setting names could not be read or parsed; the message says why, in an operator's words. */
export class JsonFileProblem extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonFileProblem';
  }
}

/**
 * Reads and parses a JSON file a setting names in place of a built-in one (a model catalog, a
 * faithful profile). Throws a
 * JsonFileProblem telling a missing file, a directory, a file the gateway's user may not read and
 * text that is not JSON apart; the caller adds the setting and the path.
 */
export function readJsonFile(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw new JsonFileProblem(fileReadProblem(error));
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    // The parser's words say where the text breaks (the operator's own file, not a secret).
    throw new JsonFileProblem(`not readable JSON: ${(error as Error).message.slice(0, 200)}`);
  }
}

/** Why a file could not be read, by its errno (never the message, which quotes the path), with the fix. */
export function fileReadProblem(error: unknown): string {
  const errno = errnoOf(error);
  switch (errno) {
    case 'ENOENT':
      // Every file a setting names this way replaces a built-in one (a catalog, a faithful profile).
      return 'file not found: correct the path, or unset the setting for the built-in one';
    case 'EISDIR':
      // What a bind mount of a host file that did not exist leaves: Docker creates a directory there.
      return 'is a directory, not a file (EISDIR): point the setting at the JSON file (a bind mount of a file missing on the host creates a directory in its place)';
    case 'EACCES':
    case 'EPERM':
      return `not readable (${errno}): make it readable by ${gatewayUser()} with chown or chmod, and let that user into its directories`;
    default:
      return errno === undefined ? 'not readable' : `not readable (${errno})`;
  }
}
