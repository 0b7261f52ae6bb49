type Json = Record<string, unknown>;

/** The output the Codex CLI records for a call that never got one (the user interrupted it). */
export const ABORTED_CALL_OUTPUT = 'aborted';

const OUTPUT_TYPE_OF_CALL: Readonly<Record<string, string>> = {
  function_call: 'function_call_output',
  custom_tool_call: 'custom_tool_call_output',
};
const OUTPUT_TYPES = new Set(Object.values(OUTPUT_TYPE_OF_CALL));

/** The repaired input and what was changed (counts only, for the debug log). */
export interface PairedInput {
  readonly items: Json[];
  /** Calls that had no output and got an `aborted` one. */
  readonly abortedCalls: number;
  /** Outputs whose call is not in the request, dropped. */
  readonly orphanOutputs: number;
}

const callIdOf = (item: Json) => (typeof item.call_id === 'string' ? item.call_id : undefined);

/**
 * Makes every call and output in a Responses input pair up, as the Codex CLI does before each
 * request (`codex-rs/core/src/context_manager/normalize.rs`): the backend answers 400 "No tool output
 * found for function call …" / "No tool call found for function call output …" otherwise, and agent
 * clients produce both (a cancelled parallel call, a history trimmed from the front). A call without
 * an output gets an `aborted` output of its own kind right after it (after earlier synthesized
 * ones, so parallel calls keep their order); an output with no call before it is dropped.
 */
export function pairCallsWithOutputs(input: readonly Json[]): PairedInput {
  const answered = new Set<string>();
  for (const item of input) {
    const id = callIdOf(item);
    if (id !== undefined && OUTPUT_TYPES.has(String(item.type))) answered.add(id);
  }
  const called = new Set<string>();
  const items: Json[] = [];
  let abortedCalls = 0;
  let orphanOutputs = 0;
  let pendingAborted: Json[] = [];
  const flushAborted = () => {
    items.push(...pendingAborted);
    pendingAborted = [];
  };
  for (const item of input) {
    const id = callIdOf(item);
    const outputType = OUTPUT_TYPE_OF_CALL[String(item.type)];
    if (outputType !== undefined && id !== undefined) {
      items.push(item);
      called.add(id);
      if (!answered.has(id)) {
        pendingAborted.push({ type: outputType, call_id: id, output: ABORTED_CALL_OUTPUT });
        abortedCalls++;
      }
      continue;
    }
    flushAborted();
    if (OUTPUT_TYPES.has(String(item.type)) && (id === undefined || !called.has(id))) {
      orphanOutputs++;
      continue;
    }
    items.push(item);
  }
  flushAborted();
  return { items, abortedCalls, orphanOutputs };
}
