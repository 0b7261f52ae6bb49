import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { WEBSOCKET_CLOSE_GRACE_MS } from './provider-a.constants';
import { postInstead } from './provider-a.http-fallback';
import { FrameTooLarge, MAX_MESSAGE_BYTES_HEADER, WsSession } from './provider-a.ws-session';
import { UpstreamRefusal } from '../shared/upstream-failure';

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

  describe('postInstead (the HTTP + SSE fallback)', () => {
    const fallbackInput = (request: jest.Mock) => ({
      url,
      headers: {},
      body: { model: 'm' },
      signal: new AbortController().signal,
      overHttp: { request },
    });

    it('closes the socket that refused the frame and sends the request over HTTP instead', async () => {
      announce = '100';
      const session = await connect();
      const request = jest.fn(() => ({ headers: {}, body: { model: 'm' } }));
      const tooLarge = new FrameTooLarge(101, 100);
      // The limit server is WebSocket only: the POST it gets is refused (426), which shows it went out.
      const failure = await postInstead(session, fallbackInput(request), tooLarge).catch((error: unknown) => error);
      const openAfter = session.open;
      session.close();
      expect(request).toHaveBeenCalledTimes(1);
      expect(failure).toBeInstanceOf(UpstreamRefusal);
      expect(failure).toMatchObject({ status: 426 });
      expect(openAfter).toBe(false);
    });

    it('throws any other send failure on: no HTTP request, the socket left to its owner', async () => {
      announce = '100';
      const session = await connect();
      const request = jest.fn(() => ({ headers: {}, body: { model: 'm' } }));
      const other = new Error('a provider_a WebSocket session carries one turn at a time');
      await expect(Promise.resolve().then(() => postInstead(session, fallbackInput(request), other))).rejects.toBe(
        other,
      );
      const openAfter = session.open;
      session.close();
      expect(request).not.toHaveBeenCalled();
      expect(openAfter).toBe(true);
    });
  });
});

describe('WsSession opening and closing its connection (docs/upstream/provider-a.md §4.1)', () => {
  let server: WebSocketServer;
  let url: string;
  /** The upgrade's request headers, and the close code the server got, per connection in order. */
  const upgrades: IncomingHttpHeaders[] = [];
  const closeCodes: Array<Promise<number>> = [];
  /** Refuse the next upgrades with this status and headers. */
  let refusal: { status: number; headers: Record<string, string> } | undefined;
  /** Stop reading the connections opened from now on: a peer that never answers a close frame. */
  let deaf = false;

  beforeAll(async () => {
    server = new WebSocketServer({
      host: '127.0.0.1',
      port: 0,
      perMessageDeflate: true,
      verifyClient: (_info, done) => (refusal ? done(false, refusal.status, 'refused', refusal.headers) : done(true)),
    });
    server.on('connection', (socket, request) => {
      upgrades.push(request.headers);
      closeCodes.push(new Promise((resolve) => socket.on('close', (code) => resolve(code))));
      if (deaf) request.socket.pause();
    });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => {
    // A deaf connection never reads the client's end: the server drops it itself.
    for (const client of server.clients) client.terminate();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    upgrades.length = 0;
    closeCodes.length = 0;
    refusal = undefined;
    deaf = false;
  });
  afterEach(() => jest.restoreAllMocks());

  const connect = () => WsSession.connect(url, {}, new AbortController().signal);

  it('offers no permessage-deflate, though the server would take it', async () => {
    const session = await connect();
    expect(upgrades).toHaveLength(1);
    expect(upgrades[0]['sec-websocket-extensions']).toBeUndefined();
    session.close();
  });

  it('closes with the normal close code 1000', async () => {
    const session = await connect();
    session.close();
    expect(await closeCodes[0]).toBe(1000);
  });

  it('drops the socket after the close grace when the peer never answers the close frame', async () => {
    deaf = true;
    const session = await connect();
    const closed = new Promise<void>((resolve) => session.onClose(resolve));
    // The grace period runs out at once, and the other timers closing arms (ws's own 30 s close
    // timer) never fire: only the session's grace can drop the socket, and no real second passes.
    const real = globalThis.setTimeout;
    jest
      .spyOn(globalThis, 'setTimeout')
      .mockImplementation((callback: () => void, ms?: number) =>
        ms === WEBSOCKET_CLOSE_GRACE_MS ? real(callback, 0) : real(() => undefined, 0),
      );
    session.close();
    jest.restoreAllMocks();
    await closed;
  });

  it("keeps a refused upgrade's status and response headers (its Retry-After) for the error", async () => {
    refusal = { status: 429, headers: { 'retry-after': '7' } };
    const failure = await connect().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(UpstreamRefusal);
    expect(failure).toMatchObject({ status: 429, headers: expect.objectContaining({ 'retry-after': '7' }) });
  });
});
