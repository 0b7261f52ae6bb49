import { boundedUpstreamMessage, MAX_UPSTREAM_MESSAGE_LENGTH } from './upstream-message';

describe('boundedUpstreamMessage', () => {
  it('keeps a CLI message as it is', () => {
    expect(boundedUpstreamMessage('Not logged in · Please run /login')).toBe('Not logged in · Please run /login');
    expect(boundedUpstreamMessage("You've hit your 5-hour limit · resets Mar 17, 2030, 5:46pm (UTC)")).toBe(
      "You've hit your 5-hour limit · resets Mar 17, 2030, 5:46pm (UTC)",
    );
  });

  it('joins lines so the text cannot forge a log line', () => {
    expect(boundedUpstreamMessage('first\n{"event":"forged"}\r\n\tlast')).toBe('first {"event":"forged"} last');
  });

  it('removes e-mails, bearer values and token-shaped runs', () => {
    const text =
      'login of jane.doe@example.com failed: Authorization: Bearer abc.def.ghi, key sk-ant-oat01-AAAAAAAAAAAAAAAAAAAAAAAAAAAA eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJl';
    const cleaned = boundedUpstreamMessage(text)!;
    expect(cleaned).not.toMatch(/jane|example\.com|abc\.def|sk-ant|eyJ/);
    expect(cleaned).toContain('[email]');
    expect(cleaned).toContain('[redacted]');
  });

  it('bounds the length without splitting a code point', () => {
    const cleaned = boundedUpstreamMessage('é😀 '.repeat(500))!;
    expect(Array.from(cleaned)).toHaveLength(MAX_UPSTREAM_MESSAGE_LENGTH);
    expect(cleaned.endsWith('…')).toBe(true);
  });

  it('gives nothing for nothing', () => {
    expect(boundedUpstreamMessage(undefined)).toBeUndefined();
    expect(boundedUpstreamMessage(' \n ')).toBeUndefined();
  });
});

describe('boundedUpstreamMessage prose', () => {
  it('leaves words such as "API key" in a sentence alone', () => {
    expect(boundedUpstreamMessage('Invalid API key · Please run /login')).toBe('Invalid API key · Please run /login');
    expect(boundedUpstreamMessage('Failed to authenticate. API Error: 401 Invalid bearer token')).toBe(
      'Failed to authenticate. API Error: 401 Invalid bearer token',
    );
  });
});
