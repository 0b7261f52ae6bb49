import type { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';

/**
 * The request-body bytes all requests together may hold in memory (GATEWAY_MAX_BODY_BYTES_IN_FLIGHT,
 * docs/deployment.md "Memory budget"). A body's bytes are held as they are read, until its
 * request's response closes, since the request keeps its parsed body that long: a body's size in memory is
 * several times its bytes, so a few large bodies at once would otherwise take the process past its
 * memory limit. The body's reader holds its bytes (jsonBodyMiddleware); the one 'close' listener
 * every request in flight already has (DrainService.track) gives them back, so a request costs an
 * add and a subtract, and nothing more. The metrics read what is held, and the refusals, at each
 * scrape (body-budget-metrics.ts).
 */
export class BodyBudget {
  private held = 0;
  /** Bodies refused because they did not fit, by the route whose reader refused them. */
  private readonly refusedBodies: Record<BodyRoute, number> = { chat: 0, structured: 0 };

  /** `limitBytes` 0: no bound (nothing is counted). */
  constructor(readonly limitBytes: number) {}

  /** Bytes held now by the requests in flight. */
  get heldBytes(): number {
    return this.held;
  }

  /**
   * Whether `bytes` more would fit beside what is held now; nothing is held. A body's declared
   * length is asked about before a byte of it is read, so that one which cannot fit is refused at
   * once, but not held: a client may be slow to send it, or never send it.
   */
  hasRoomFor(bytes: number): boolean {
    return this.held + bytes <= this.limitBytes;
  }

  /**
   * Holds bytes for the request of `response` until that response closes, so that it holds
   * `totalBytes` in all (what has arrived of its body so far); false, and nothing more held, when
   * they do not fit beside what is held already. Once the
   * response has closed nothing is held: its bytes were given back, and what still arrives of the
   * body (read to its end, or inflated, after the answer) is dropped with the connection.
   */
  holdUpTo(response: ServerResponse, totalBytes: number): boolean {
    const holder = response as BodyHolder;
    const more = totalBytes - (holder[HELD_BYTES] ?? 0);
    if (more <= 0 || response.closed) return true;
    if (this.held + more > this.limitBytes) return false;
    this.held += more;
    holder[HELD_BYTES] = totalBytes;
    holder[BUDGET] = this;
    return true;
  }

  /** Bodies refused so far by `route`'s reader because they did not fit (`holdUpTo` false). */
  refusals(route: BodyRoute): number {
    return this.refusedBodies[route];
  }

  /** The reader of `route` refused a body that did not fit: counted for the metrics. */
  countRefusal(route: BodyRoute): void {
    this.refusedBodies[route]++;
  }

  private release(bytes: number): void {
    this.held -= bytes;
  }

  /** Gives back what the request of `response` holds (its response closed); nothing when it holds nothing. */
  static releaseHeldBy(response: EventEmitter): void {
    const holder = response as BodyHolder;
    const bytes = holder[HELD_BYTES];
    if (!bytes) return;
    holder[HELD_BYTES] = 0;
    holder[BUDGET]!.release(bytes);
  }
}

/** The routes whose bodies count against the budget. */
export type BodyRoute = 'chat' | 'structured';
export const BODY_ROUTES: readonly BodyRoute[] = ['chat', 'structured'];

const HELD_BYTES = Symbol('heldBodyBytes');
const BUDGET = Symbol('bodyBudget');
type BodyHolder = EventEmitter & { [HELD_BYTES]?: number; [BUDGET]?: BodyBudget };
