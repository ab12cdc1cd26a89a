import { blockedReason, checkWebhookUrl } from './ssrf';
import { parseRetryAfter, signPayload } from './sender';

describe('webhook SSRF guard', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private (carrier-grade NAT)'],
    ['169.254.169.254', 'link-local / cloud metadata'],
    ['0.0.0.0', 'unspecified'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fd00:ec2::254', 'private (unique local)'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'link-local / cloud metadata'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['224.0.0.1', 'multicast'],
  ])('refuses %s (%s)', (address, reason) => {
    expect(blockedReason(address)).toBe(reason);
  });

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows public %s', (address) => {
    expect(blockedReason(address)).toBeUndefined();
  });

  it('checks URLs: https only, no credentials, names resolved before judging', async () => {
    const strict = { allowInsecure: false };
    expect(await checkWebhookUrl('http://93.184.216.34/hook', strict)).toBe('must start with https://');
    expect(await checkWebhookUrl('https://user:pw@93.184.216.34/hook', strict)).toBe('must not contain credentials');
    expect(await checkWebhookUrl('https://93.184.216.34/hook', strict)).toBeUndefined();
    expect(await checkWebhookUrl('https://[::1]:8443/hook', strict)).toMatch(/loopback/);
    expect(await checkWebhookUrl('https://localhost/hook', strict)).toMatch(/localhost resolves to .* loopback/);
    expect(await checkWebhookUrl('https://no-such-host.invalid/hook', strict)).toMatch(/does not resolve/);
    const insecure = { allowInsecure: true };
    expect(await checkWebhookUrl('http://127.0.0.1:8080/hook', insecure)).toBeUndefined();
    expect(await checkWebhookUrl('ftp://127.0.0.1/hook', insecure)).toBe('must start with https:// or http://');
  });
});

describe('webhook signing and Retry-After', () => {
  it('signs with lower-case hex HMAC-SHA256 of the exact bytes', () => {
    // RFC 4231 test case 2.
    expect(signPayload('Jefe', 'what do ya want for nothing?')).toBe('5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-11-22T10:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('Sun, 22 Nov 2026 10:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});
