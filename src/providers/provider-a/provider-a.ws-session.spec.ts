import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { FrameTooLarge, MAX_MESSAGE_BYTES_HEADER, WsSession } from './provider-a.ws-session';

describe('WsSession and the announced message limit (docs/providers.md "WebSocket message limit")', () => {
  let server: WebSocketServer;
  let url: string;
  const received: number[] = [];
  let announce: string | undefined;

  beforeAll(async () => {
    server = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
    server.on('headers', (headers) => {
      if (announce !== undefined) headers.push(`${MAX_MESSAGE_BYTES_HEADER}: ${announce}`);
    });
    server.on('connection', (socket) => socket.on('message', (data: Buffer) => received.push(data.length)));
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => (received.length = 0));

  /** A frame whose JSON text is exactly `bytes` long. */
  const frameOf = (bytes: number) => ({ pad: 'p'.repeat(bytes - '{"pad":""}'.length) });
  const connect = () => WsSession.connect(url, {}, new AbortController().signal);
  const waitForFrames = async (count: number) => {
    for (let waited = 0; received.length < count && waited < 30_000; waited += 10)
      await new Promise((resolve) => setTimeout(resolve, 10));
  };

  it('reads the limit from the upgrade answer; a frame of exactly the limit is sent, one byte more is not', async () => {
    announce = '100';
    const session = await connect();
    expect(session.maxMessageBytes).toBe(100);
    const connection = session.send(frameOf(100), new AbortController().signal);
    await waitForFrames(1);
    expect(received).toEqual([100]);
    connection.close();
    const next = await connect();
    const thrown = (() => {
      try {
        next.send(frameOf(101), new AbortController().signal);
        return undefined;
      } catch (error) {
        return error;
      }
    })();
    expect(thrown).toBeInstanceOf(FrameTooLarge);
    expect(thrown).toMatchObject({ frameBytes: 101, limitBytes: 100 });
    // The refused frame never left; the session can still carry a turn that fits.
    expect(next.idle).toBe(true);
    next.send(frameOf(50), new AbortController().signal).close();
    await waitForFrames(2);
    expect(received).toEqual([100, 50]);
  });

  it('counts UTF-8 bytes, not characters', async () => {
    announce = '40';
    const session = await connect();
    // 16 two-byte characters: 26 characters of JSON, 42 bytes.
    expect(() => session.send({ pad: 'é'.repeat(16) }, new AbortController().signal)).toThrow(FrameTooLarge);
    session.close();
  });

  it.each([undefined, '0', '-5', 'lots', '1e3'])('announces no limit for %p', async (value) => {
    announce = value;
    const session = await connect();
    expect(session.maxMessageBytes).toBeUndefined();
    session.close();
  });
});
