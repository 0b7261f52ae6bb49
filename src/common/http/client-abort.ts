import type { Response } from 'express';
import { ClientDisconnectedError } from '../../core/gateway.error';

/**
 * An AbortController that fires when the client goes away. It listens on the RESPONSE's
 * 'close' with `!writableFinished`: a request's 'close' fires as soon as its body was read on
 * Node ≥16, long before the client actually leaves (style.md B.5 #4). The link lasts for the
 * whole request, stream included.
 */
export function abortOnClientDisconnect(response: Response): AbortController {
  const controller = new AbortController();
  response.once('close', () => {
    if (!response.writableFinished) controller.abort(new ClientDisconnectedError());
  });
  return controller;
}
