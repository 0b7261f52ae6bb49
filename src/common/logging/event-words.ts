/**
 * What each log event says in words, for a person reading a terminal (LOG_FORMAT=pretty). A JSON
 * record keeps its `msg` as it is, the event's name, for the machines that read it; readable lines
 * show these words instead. `{field}` names a field of the record: its value is written in its
 * place and the field is not repeated after the message. Events logged with a sentence as their
 * `msg` (SENTENCE_EVENTS, and pino-http's `request completed`) need no entry here.
 * src/common/logging/event-words.spec.ts fails on an event logged anywhere in src/ without words
 * or named nowhere in docs/, and on words for an event nothing logs.
 */
/** Events whose `msg` is the readable sentence itself (the fix included), in JSON too. */
export const SENTENCE_EVENTS: ReadonlySet<string> = new Set(['login_state', 'login_none_usable', 'plan_usage']);

export const EVENT_WORDS: Readonly<Record<string, string>> = {
  // ── Lifecycle ────────────────────────────────────────────────────────────────────────────────
  gateway_listening: 'listening on {host}:{port}, serving {providers}',
  semi_space_unbounded: "node was started without {flag}, so V8's young generation is not bounded",
  setting_variable_unknown: '{variable} is set but is no setting, so it is ignored (did you mean {closest}?)',
  drain_start: '{signal}: draining, {in_flight} requests in flight',
  drain_timeout:
    'GATEWAY_DRAIN_TIMEOUT ({timeout_ms} ms) passed with {cut} requests in flight: each is ended with the draining error',
  drain_end: 'drained: {cut} requests ended at the drain timeout, {in_flight} closed without their answer',
  http_request_rejected:
    'a request from {remote_address} port {remote_port} was refused before any route saw it ({reason}), answered {status}',
  unhandled_error: 'a request failed on a bug in the gateway',
  structured_enabled: 'structured inference is on, {models} models allowed',
  structured_models_dropped: 'STRUCTURED_MODELS names models that cannot serve structured inference: {models}',
  default_model_not_served:
    'the default model {default_model} belongs to {family}, which is not enabled: every chat request without model fails',
  // ── Chat and structured requests ─────────────────────────────────────────────────────────────
  chat_completion: 'chat {status} on {model}',
  chat_json_invalid: 'the answer did not satisfy response_format (attempt {attempt})',
  chat_tool_choice_unmet: 'the answer did not make the tool call tool_choice asks for (attempt {attempt})',
  chat_strict_call_refused:
    "the answer had a tool call its strict tool's parameters schema refuses, so it is asked again (attempt {attempt})",
  context_manage: 'the conversation history was compacted',
  tool_call_invalid:
    'an upstream tool call at index {index} is invalid ({reason}), so the turn ends with invalid_tool_call',
  tool_call_empty: 'an empty upstream tool call (no name, no arguments) at index {index} was dropped',
  tool_call_unchosen: 'a tool call of another tool than the one tool_choice forces was dropped',
  structured_success: 'structured inference succeeded on {model}',
  structured_replay: 'structured inference replayed a stored answer',
  structured_failure: 'structured inference failed: {code}',
  structured_conflict: 'structured inference refused: idempotency_key reused with other parameters',
  structured_canceled: 'the client left before its structured answer',
  // ── Queues ───────────────────────────────────────────────────────────────────────────────────
  queue_wait: 'waiting in the queue at position {position}',
  queue_acquire: 'got a slot after {wait_ms} ms',
  queue_full: 'refused: the waiting list is full ({setting})',
  queue_timeout: 'refused: no slot freed after {wait_ms} ms, held back by the {blocked_by} cap ({setting})',
  queue_canceled: 'the client left after waiting {wait_ms} ms',
  queue_draining: 'the drain timeout ended its wait after {wait_ms} ms',
  queue_release: 'freed its slot after {run_ms} ms',
  // ── Logins and accounts ──────────────────────────────────────────────────────────────────────
  login_check_failed: 'the check of login "{account}" failed',
  account_state: '{provider} login "{account}": {from} → {state}',
  account_login_changed:
    '{provider} login "{account}": its file now holds another login, so what was known of the previous one ({from}: its plan, rest or cooldown) was dropped and the new one is read afresh',
  account_report_stale:
    '{provider} login "{account}": a turn that started on the login its file held before reported {report}; it is that login\'s, so nothing of the new login changed',
  account_model_resting:
    '{provider} login "{account}" spent its quota for {model} until {until}; its other models still serve, and {model} goes to another login meanwhile',
  account_needs_extra_usage:
    '{provider} login "{account}" was refused as a third-party app that needs extra usage; the account owner can add it on the vendor\'s usage page',
  account_usage_wait:
    '{provider}: a turn waits for the first usage read of login "{account}" (ACCOUNT_PAID_USAGE=plan_only: a spent plan is refused before it is sent)',
  account_slot_wait:
    '{provider}: every login that could take this turn is at ACCOUNT_MAX_IN_FLIGHT with a turn that is over but still being stopped; the turn waits for its slot',
  paid_usage_turn: '{provider} login "{account}" served a turn billed as {paid_usage} (ACCOUNT_PAID_USAGE={setting})',
  plan_usage_read_failed:
    '{provider} login "{account}": the vendor\'s usage endpoint could not be read ({reason}); the plan is shown from turns only',
  account_refresh_ahead_over_lifetime:
    '{provider} login "{account}": its new token lives {token_lifetime_ms} ms, within ACCOUNT_REFRESH_AHEAD ({refresh_ahead_ms} ms), so every check would renew it again; it is renewed when {renews_at_ms} ms are left instead',
  account_refresh_failed:
    '{provider} login "{account}" could not be refreshed ahead of expiry ({reason}): {fix}; trying again at the next check',
  provider_a_auth_retry:
    'the upstream refused the login token (HTTP {upstream_status}); refreshing it and trying again',
  provider_b_auth_retry:
    'the upstream refused the login token (HTTP {upstream_status}); refreshing it and trying again',
  provider_a_token_refreshed: 'the token of Codex CLI login "{account}" was refreshed',
  provider_a_auth_persist_superseded:
    'the file of Codex CLI login "{account}" was rewritten while its token was refreshed (a new `codex login`): the file is kept as it is, and its login used',
  provider_a_token_refresh_failed:
    'the token of Codex CLI login "{account}" could not be refreshed ({error_code}): {fix}',
  provider_a_login_expired: 'Codex CLI login "{account}" expired and has no refresh token: {fix}',
  provider_a_login_revoked: 'Codex CLI login "{account}" was revoked and its file has not changed: {fix}',
  provider_a_auth_persist_failed: 'Codex CLI login "{account}": {fix}',
  provider_b_auth_refreshed: 'the token of Gemini CLI login "{account}" was refreshed',
  provider_b_auth_persist_superseded:
    'the file of Gemini CLI login "{account}" was rewritten while its token was refreshed (a new `gemini` login): the file is kept as it is, and its login used',
  provider_b_auth_refresh_failed: 'the token of Gemini CLI login "{account}" could not be refreshed: {fix}',
  provider_b_auth_unavailable: 'Gemini CLI login "{account}" at {path} is not usable ({reason}): {fix}',
  provider_b_auth_persist_failed: 'Gemini CLI login "{account}": {fix}',
  provider_c_token_refreshed: 'the token of Claude Code CLI login "{account}" was refreshed',
  provider_c_auth_persist_superseded:
    'the file of Claude Code CLI login "{account}" was rewritten while its token was refreshed (a new `claude` /login): the file is kept as it is, and its login used',
  provider_c_refresh_failed:
    'the token of Claude Code CLI login "{account}" could not be refreshed (HTTP {status}): {fix}',
  // ── provider_a ───────────────────────────────────────────────────────────────────────────────
  provider_a_request: 'sending a turn over {transport}',
  provider_a_rate_limits: 'the plan usage the upstream reported',
  provider_a_client_version_unverified:
    'PROVIDER_A_CLIENT_VERSION claims Codex CLI {client_version}, but this gateway verified {verified_version}',
  provider_a_models_refreshed: 'the live model list has {models} models, {ids_added} new',
  provider_a_models_refresh_failed: 'the live model list could not be fetched ({reason}); the last good one stays',
  provider_a_tier_not_in_live_list: 'the live model list has no model of some tiers; their ids keep the bundled model',
  provider_a_tier_ids_gone: 'tier ids no longer exist, their tier now means a model without those suffixes: {ids}',
  provider_a_websocket_message_too_large:
    'a turn of {frame_bytes} bytes exceeded the connection limit of {limit_bytes}; sent over HTTP instead',
  // ── provider_b ───────────────────────────────────────────────────────────────────────────────
  provider_b_attempt: 'sending attempt {attempt} ({method})',
  provider_b_request_adjusted: 'the request was adjusted to what Code Assist accepts',
  provider_b_project_unavailable: 'Code Assist set-up gave no project ({reason}): {fix}',
  provider_b_login_refused: 'Code Assist refused this login for a reason a new login does not fix ({reason}): {fix}',
  // ── provider_c ───────────────────────────────────────────────────────────────────────────────
  provider_c_command_missing: 'the Claude Code CLI ({command}) cannot be run ({reason}): {fix}',
  provider_c_credential_variables_ignored: 'the claude children do not get {variables}: {fix}',
  provider_c_process_start: 'started a claude child (pid {pid}, attempt {attempt})',
  provider_c_process_exit: 'the claude child ended with code {exit_code} after {duration_ms} ms',
  provider_c_spawn_failed: 'the claude child could not start ({errno})',
  provider_c_missing_result: 'the claude child ended without a result line',
  provider_c_non_json_line: 'skipped a line of the claude child that is not JSON',
  provider_c_prompt_adjusted:
    'the prompt answers {cancelled_tool_calls} unanswered tool calls as cancelled and leaves out {orphan_tool_results} tool results without their call',
  provider_c_answer_restarted:
    'the API stream broke mid-answer; the claude child gave up the answer from block {from_block_index} to write it again',
  provider_c_answer_asked_again:
    'the answer had no text, so the claude child asked the API again and the new answer replaces it',
  tool_fence_unclosed: 'a tool-call block was still open at the end of the answer',
  tool_fence_invalid: 'a tool-call block was dropped: {reason}',
  tool_fence_too_large: 'a tool-call block over 8 MiB was dropped',
  tool_fence_duplicate: 'a tool call drafted in thinking and repeated in the answer was skipped',
  tool_fence_discarded:
    'a tool-call block was dropped: the request allows no tool call (no tools, or tool_choice "none")',
  // ── Upstream turns (every family) ────────────────────────────────────────────────────────────
  upstream_attempt_failed: '{provider} attempt {attempt} failed: {error_code}',
  upstream_retry: '{provider}: trying the turn again in {delay_ms} ms',
  upstream_account_moved: '{provider}: the turn moved from login "{from_account}" to "{to_account}"',
  upstream_turn_failed: '{provider}: the turn failed: {error_code}',
  upstream_canceled: '{provider}: the client left during the turn',
};
