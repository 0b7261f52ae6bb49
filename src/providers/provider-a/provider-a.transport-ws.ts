import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import { ERROR_BODY_MAX_BYTES, WEBSOCKET_CLOSE_GRACE_MS } from './provider-a.constants';
import { connectionFailure } from './provider-a.errors';
import { FrameQueue } from './provider-a.frame-queue';
import { parseJsonOrUndefined } from '../shared/http-body';
import { websocketFrame } from './provider-a.request';
import { AttemptInput, lowerCaseHeaders, UpstreamConnection, UpstreamFrame, UpstreamRejection } from './provider-a.transport';

/** Reads at most `maxBytes` of a failed upgrade's body. */
function readIncomingCapped(response: IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const finish = () => resolve(Buffer.concat(chunks).toString('utf8'));
    response.on('data', (chunk: Buffer) => {
      chunks.push(chunk.subarray(0, Math.max(0, maxBytes - total)));
      total += chunk.length;
      if (total >= maxBytes) {
        response.destroy();
        finish();
      }
    });
    response.on('end', finish);
    response.on('error', finish);
    response.on('close', finish);
  });
}

function parseFrame(data: WebSocket.RawData, isBinary: boolean): UpstreamFrame {
  if (isBinary) return { ok: false, reason: 'binary' };
  const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
  const value = parseJsonOrUndefined(text);
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? { ok: true, value } : { ok: false, reason: 'not_json' };
}

/**
 * One WebSocket attempt (provider_a.md §4.1): a fresh connection without permessage-deflate,
 * exactly one text frame (`type: "response.create"`), then one JSON event per text frame. Ended
 * with a close frame (1000) and dropped after a 1 s grace; an abort closes it at once.
 */
export function openWebSocketConnection(input: AttemptInput): Promise<UpstreamConnection> {
  const { signal } = input;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<UpstreamConnection>((resolve, reject) => {
    const socket = new WebSocket(input.url, { headers: input.headers, perMessageDeflate: false, followRedirects: false });
    let settled = false;
    let graceTimer: NodeJS.Timeout | undefined;
    let responseHeaders: Record<string, string> = {};
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      outcome();
    };

    const close = () => {
      if (socket.readyState === WebSocket.CONNECTING) {
        socket.terminate();
      } else if (socket.readyState === WebSocket.OPEN) {
        socket.close(1000);
        graceTimer = setTimeout(() => socket.terminate(), WEBSOCKET_CLOSE_GRACE_MS);
        graceTimer.unref();
      }
    };
    const queue = new FrameQueue<UpstreamFrame>(
      (paused) => (paused ? socket.pause() : socket.resume()),
      64,
      close,
    );
    const onAbort = () => {
      close();
      queue.fail(signal.reason);
      settle(() => reject(signal.reason));
    };
    signal.addEventListener('abort', onAbort, { once: true });

    socket.on('upgrade', (response) => {
      responseHeaders = lowerCaseHeaders(response.headers);
    });
    socket.on('unexpected-response', (_request, response) => {
      const status = response.statusCode ?? 502;
      const headers = lowerCaseHeaders(response.headers);
      void readIncomingCapped(response, ERROR_BODY_MAX_BYTES).then((text) => {
        settle(() => reject(new UpstreamRejection(status, headers, parseJsonOrUndefined(text))));
        socket.terminate();
      });
    });
    socket.on('open', () => {
      if (signal.aborted) return;
      socket.send(JSON.stringify(websocketFrame(input.body, Date.now())));
      settle(() =>
        resolve({
          responseHeaders,
          frames: queue,
          close,
        }),
      );
    });
    socket.on('message', (data, isBinary) => queue.push(parseFrame(data, isBinary)));
    socket.on('error', (error) => {
      settle(() => reject(connectionFailure('websocket connection failed', error)));
    });
    socket.on('close', () => {
      clearTimeout(graceTimer);
      signal.removeEventListener('abort', onAbort);
      queue.end();
      settle(() => reject(connectionFailure('websocket closed during the handshake')));
    });
  });
}
