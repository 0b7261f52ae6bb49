import { MAX_LOGGED_UPSTREAM_MESSAGE_LENGTH, sanitizeIdentifier, sanitizeUpstreamMessage } from './sanitize';

describe(sanitizeIdentifier.name, () => {
  it('turns CR and LF into spaces so a value cannot forge a second record', () => {
    expect(sanitizeIdentifier('req\r\n{"level":50}')).toBe('req  {"level":50}');
    expect(sanitizeIdentifier('req\n{"level":50}')).toBe('req {"level":50}');
  });

  it('replaces NUL, TAB, DEL, C1 controls (NEL) and the Unicode line/paragraph separators', () => {
    expect(sanitizeIdentifier('a\u0000b\tc\u007fd\u0085e\u009ff\u2028g\u2029h')).toBe('a b c d e f g h');
  });

  it('cuts a 10 000-character value to its first 128 characters', () => {
    const long = 'x'.repeat(10_000);
    expect(sanitizeIdentifier(long)).toBe('x'.repeat(128));
  });

  it('keeps a 128-character value and cuts a 130-character one without a suffix', () => {
    expect(sanitizeIdentifier('a'.repeat(128))).toBe('a'.repeat(128));
    expect(sanitizeIdentifier('b'.repeat(130))).toBe('b'.repeat(128));
  });

  it('counts code points, never splitting a surrogate pair', () => {
    const value = '😀'.repeat(130);
    const result = sanitizeIdentifier(value);
    expect(Array.from(result)).toHaveLength(128);
    expect(result).toBe('😀'.repeat(128));
  });

  it('renders absent values as an empty string and leaves clean values alone', () => {
    expect(sanitizeIdentifier(undefined)).toBe('');
    expect(sanitizeIdentifier('golden-req-0001')).toBe('golden-req-0001');
  });
});

describe(sanitizeUpstreamMessage.name, () => {
  it('keeps the words of an upstream error and nothing that could forge a record', () => {
    expect(sanitizeUpstreamMessage('Not logged in · Please run /login\n{"level":50}')).toBe(
      'Not logged in · Please run /login {"level":50}',
    );
  });

  it('redacts bearer tokens, JWTs, API keys, long opaque strings and e-mail addresses', () => {
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJl';
    const message = `Bearer abc.def rejected; token ${jwt}; key sk-proj-0123456789abcdef; ya29.a0AfH6SMBx-long-token; user jane.doe@example.com; id ${'Z'.repeat(48)}`;
    const sanitized = sanitizeUpstreamMessage(message)!;
    for (const secret of ['abc.def', jwt, 'sk-proj', 'ya29', 'jane.doe', 'example.com', 'Z'.repeat(48)])
      expect(sanitized).not.toContain(secret);
    expect(sanitized).toContain('[redacted]');
  });

  it('cuts to 200 code points and gives undefined for no text', () => {
    expect(Array.from(sanitizeUpstreamMessage('é'.repeat(500))!)).toHaveLength(MAX_LOGGED_UPSTREAM_MESSAGE_LENGTH);
    expect(sanitizeUpstreamMessage('   ')).toBeUndefined();
    expect(sanitizeUpstreamMessage(42)).toBeUndefined();
  });
});
