/**
 * The settings a test gateway runs with, in-process or as a child: only what it needs, on a random
 * loopback port, with a private HOME, so it never reads the developer's real logins or secrets.
 */
export function gatewayEnvironment(settings: Record<string, string>, home: string): Record<string, string | undefined> {
  return {
    PATH: process.env.PATH,
    HOME: home,
    GATEWAY_HOST: '127.0.0.1',
    GATEWAY_PORT: '0',
    LOG_LEVEL: 'info',
    // No usage-endpoint reads unless a spec asks: a startup read would refresh logins and call the fakes.
    ACCOUNT_USAGE_REFRESH_INTERVAL: '0',
    ...settings,
  };
}
