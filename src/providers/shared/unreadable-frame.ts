import { GatewayError } from '../../core/gateway.error';
import type { ProviderId } from '../../core/provider-id';
import type { FrameStep } from './turn-runner';

/**
 * The one policy for a frame that is not the JSON its wire promises (docs/architecture.md "The
 * family contract"): the attempt failed, as a retryable upstream error, so the runner sends it again
 * while nothing was shown and ends the turn with an error after output. A family says only what
 * the frame was (`binary frame`, `non-JSON frame`); a family whose upstream legitimately prints
 * other text between its JSON lines (provider_c's CLI) skips those lines before they become frames.
 */
export function unreadableFrame(provider: ProviderId, what: string): FrameStep {
  return { events: [], failure: new GatewayError('upstream', { detail: `${provider} ${what}`, retryable: true }) };
}
