import { listenFailureMessage } from './listen-address';

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`listen ${code}`), { code });
}

describe('listenFailureMessage', () => {
  it('names the port setting and the privilege for a port the process may not bind', () => {
    expect(listenFailureMessage(errno('EACCES'), '0.0.0.0', 80)).toBe(
      'cannot listen on "0.0.0.0" port 80: permission denied (EACCES); ports below 1024 need privileges on most systems, so set GATEWAY_PORT / --gateway-port to 1024 or above, or grant the process CAP_NET_BIND_SERVICE',
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
