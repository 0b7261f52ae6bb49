/**
 * An upstream's refusal of an attempt as it came: a status that is not a success, its headers
 * (lower-case names) and its error body parsed as JSON when it was. What a family's `send` rejects
 * with for its `classify` to read (turn-runner.ts); nothing classifies it on the way. The body is
 * never logged or echoed.
 */
export class UpstreamRefusal extends Error {
  constructor(
    readonly status: number,
    /** The parsed error body, or `undefined`. */
    readonly body: unknown,
    readonly headers: Readonly<Record<string, string | undefined>> = {},
  ) {
    super(`upstream answered HTTP ${status}`);
    this.name = 'UpstreamRefusal';
  }
}

/**
 * An error the upstream reported inside a stream it had accepted (an error event, an error
 * payload), as it came: `translate` hands it to the runner as a step's `unclassified` failure, and
 * the family's `classify` reads it with the runner's time, as it reads a refusal.
 */
export class UpstreamErrorEvent {
  constructor(
    /** The event or payload; never logged or echoed. */
    readonly payload: unknown,
  ) {}
}
