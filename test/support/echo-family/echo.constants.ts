/** The family id: its model-id prefix, metric label and GATEWAY_PROVIDERS entry (and its rows file's `provider`). */
export const ECHO_ID = 'echo';

/** The one error code only the echo family raises: the upstream retired the model. */
export const ECHO_MODEL_RETIRED = 'echo_model_retired';
