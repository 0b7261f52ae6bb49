import type { BuildInfo } from '../common/build/build-info';
import { CONTRACT_VERSION } from '../common/build/build-info';

/** Token counts as the contract names them. */
export interface StructuredUsage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
}

/**
 * Everything of a success that every participant of one inference shares, and that a replay
 * returns as stored (docs/design/behaviours.md §6.6): data, model, upstream id, usage, echoes that
 * are part of the replay key, and the versions.
 */
export interface SharedAnswer {
  readonly data: Record<string, unknown>;
  readonly model: string;
  readonly upstream_response_id: string;
  readonly usage: StructuredUsage;
  readonly idempotency_key: string;
  readonly operation: string;
  readonly schema_version: string;
  readonly model_policy_version: string;
  readonly build: BuildInfo;
}

/** The 200 body (docs/structured.md "Response (200)"), in the contract's field order. */
export interface StructuredSuccessBody {
  readonly data: Record<string, unknown>;
  readonly model: string;
  readonly upstream_response_id: string;
  readonly usage: StructuredUsage;
  readonly latency_ms: number;
  readonly request_id: string;
  readonly idempotency_key: string;
  readonly idempotent_replay: boolean;
  readonly operation: string;
  readonly schema_version: string;
  readonly model_policy_version: string;
  readonly contract_version: string;
  readonly build: BuildInfo;
}

/** A shared answer rendered for one request: its own request_id and latency, and whether it is a replay. */
export function renderSuccess(
  answer: SharedAnswer,
  requestId: string,
  latencyMs: number,
  replay: boolean,
): StructuredSuccessBody {
  return {
    data: answer.data,
    model: answer.model,
    upstream_response_id: answer.upstream_response_id,
    usage: answer.usage,
    latency_ms: latencyMs,
    request_id: requestId,
    idempotency_key: answer.idempotency_key,
    idempotent_replay: replay,
    operation: answer.operation,
    schema_version: answer.schema_version,
    model_policy_version: answer.model_policy_version,
    contract_version: CONTRACT_VERSION,
    build: answer.build,
  };
}
