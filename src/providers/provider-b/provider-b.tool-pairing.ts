/**
 * Gemini answers 400 unless every function-call turn is followed by exactly one function
 * response per call ("the number of function response parts is equal to the number of function
 * call parts of the function call turn"); the shared pairing repairs the history before every
 * request, as the Gemini CLI's own history always is.
 */
export { CANCELLED_TOOL_OUTPUT, pairToolResults } from '../shared/tool-pairing';
