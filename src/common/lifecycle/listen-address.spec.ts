import { EventEmitter } from 'node:events';
import * as net from 'node:net';
import { checkListenAddress, listenFailureMessage } from './listen-address';

// The real module, whose createServer a case may replace once (an ES namespace cannot be spied on).
jest.mock('node:net', () => {
  const actual = jest.requireActual<typeof import('node:net')>('node:net');
  return { ...actual, createServer: jest.fn(actual.createServer) };
});

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`listen ${code}`), { code });
}

describe('listenFailureMessage', () => {
  it('names the port setting and the privilege for a port the process may not bind', () => {
    expect(listenFailureMessage(errno('EACCES'), '0.0.0.0', 80)).toBe(
      'cannot listen on "0.0.0.0" port 80: permission denied (EACCES); ports below 1024 need privileges on most systems, so set GATEWAY_PORT / --gateway-port to 1024 or above, or grant the process CAP_NET_BIND_SERVICE',
    );
  });

  it('gives EPERM the same privilege fix as EACCES', () => {
    expect(listenFailureMessage(errno('EPERM'), '0.0.0.0', 443)).toBe(
      'cannot listen on "0.0.0.0" port 443: permission denied (EPERM); ports below 1024 need privileges on most systems, so set GATEWAY_PORT / --gateway-port to 1024 or above, or grant the process CAP_NET_BIND_SERVICE',
    );
  });

  it('names DNS and the host setting when the resolver did not answer', () => {
    expect(listenFailureMessage(errno('EAI_AGAIN'), 'gateway.example', 8088)).toMatch(
      /looking up "gateway\.example" failed for now \(EAI_AGAIN.*check this machine's DNS, or set GATEWAY_HOST \/ --gateway-host to an IP address$/,
    );
  });

  it('names both settings for another errno, and leaves an error without one to the bug path', () => {
    expect(listenFailureMessage(errno('EINVAL'), '::1', 8088)).toBe(
      'cannot listen on "::1" port 8088: EINVAL; check GATEWAY_HOST / --gateway-host and GATEWAY_PORT / --gateway-port',
    );
    expect(listenFailureMessage(new Error('boom'), '127.0.0.1', 8088)).toBeUndefined();
    expect(listenFailureMessage(errno('not an errno'), '127.0.0.1', 8088)).toBeUndefined();
  });
});

describe('checkListenAddress', () => {
  it('passes a listen failure without an error code on as it is, to be reported as a bug', async () => {
    const failure = new Error('boom');
    jest.mocked(net.createServer).mockImplementationOnce(() => {
      const probe = new EventEmitter() as unknown as net.Server;
      probe.listen = (() => {
        process.nextTick(() => probe.emit('error', failure));
        return probe;
      }) as net.Server['listen'];
      return probe;
    });
    await expect(checkListenAddress('127.0.0.1', 0)).rejects.toBe(failure);
  });

  it('turns a port in use into the one-line ConfigError naming the port setting', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as net.AddressInfo;
    try {
      await expect(checkListenAddress('127.0.0.1', port)).rejects.toThrow(
        /^cannot listen on "127\.0\.0\.1" port \d+: the port is already in use \(EADDRINUSE\)/,
      );
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
