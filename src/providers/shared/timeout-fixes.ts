/*
 * What an operator does about a turn a time bound ended: one wording for every family, whether the
 * runner's timer or a family's own watch (provider_c's child) saw the bound pass.
 */

/** The idle bound (GATEWAY_STREAM_IDLE_TIMEOUT) passed; `nowMs` is its value when known. */
export function idleTimeoutFix(nowMs?: number): string {
  const now = nowMs === undefined ? '' : ` (now ${nowMs} ms)`;
  return `raise GATEWAY_STREAM_IDLE_TIMEOUT${now} if the model may think silently for longer (0 turns the bound off)`;
}

/** The family's turn timeout (`setting`) passed; `nowMs` is its value when known. */
export function turnTimeoutFix(setting: string, nowMs?: number): string {
  const now = nowMs === undefined ? '' : ` (now ${nowMs} ms)`;
  return `raise ${setting}${now}, the longest one turn may take, if the model's turns take longer`;
}
