import { blockedReason, checkWebhookUrl } from './ssrf';
import { parseRetryAfter, signPayload } from './sender';

describe('webhook SSRF guard', () => {
  // One or more samples from every row of the IANA IPv4 and IPv6 Special-Purpose
  // Address Registries, plus the forms that carry an IPv4 address inside IPv6.
  it.each([
    // IANA IPv4 Special-Purpose Address Registry
    ['0.0.0.0', 'unspecified ("this network")'], // 0.0.0.0/32 This host on this network
    ['0.1.2.3', 'unspecified ("this network")'], // 0.0.0.0/8 "This network"
    ['10.1.2.3', 'private'], // 10.0.0.0/8 Private-Use
    ['100.64.0.1', 'private (carrier-grade NAT)'], // 100.64.0.0/10 Shared Address Space
    ['100.127.255.254', 'private (carrier-grade NAT)'],
    ['127.0.0.1', 'loopback'], // 127.0.0.0/8 Loopback
    ['127.255.0.9', 'loopback'],
    ['169.254.169.254', 'link-local / cloud metadata'], // 169.254.0.0/16 Link Local
    ['172.16.0.1', 'private'], // 172.16.0.0/12 Private-Use
    ['172.31.255.255', 'private'],
    ['192.0.0.1', 'reserved (special-purpose)'], // 192.0.0.0/24 IETF Protocol Assignments
    ['192.0.0.7', 'reserved (special-purpose)'], // 192.0.0.0/29 IPv4 Service Continuity Prefix
    ['192.0.0.8', 'reserved (special-purpose)'], // 192.0.0.8/32 IPv4 dummy address
    ['192.0.0.9', 'reserved (special-purpose)'], // 192.0.0.9/32 Port Control Protocol Anycast
    ['192.0.0.10', 'reserved (special-purpose)'], // 192.0.0.10/32 TURN Anycast
    ['192.0.0.170', 'reserved (special-purpose)'], // 192.0.0.170/32, 192.0.0.171/32 NAT64/DNS64 Discovery
    ['192.0.0.171', 'reserved (special-purpose)'],
    ['192.0.2.1', 'reserved (special-purpose)'], // 192.0.2.0/24 Documentation (TEST-NET-1)
    ['192.31.196.1', 'AS112 (special-purpose)'], // 192.31.196.0/24 AS112-v4
    ['192.52.193.1', 'AMT (special-purpose)'], // 192.52.193.0/24 AMT
    ['192.88.99.1', 'reserved (special-purpose)'], // 192.88.99.0/24 Deprecated (6to4 Relay Anycast)
    ['192.88.99.2', 'reserved (special-purpose)'], // 192.88.99.2/32 6a44-relay anycast address
    ['192.168.1.1', 'private'], // 192.168.0.0/16 Private-Use
    ['192.175.48.1', 'AS112 (special-purpose)'], // 192.175.48.0/24 Direct Delegation AS112 Service
    ['198.18.0.1', 'reserved (special-purpose)'], // 198.18.0.0/15 Benchmarking
    ['198.19.255.254', 'reserved (special-purpose)'],
    ['198.51.100.1', 'reserved (special-purpose)'], // 198.51.100.0/24 Documentation (TEST-NET-2)
    ['203.0.113.1', 'reserved (special-purpose)'], // 203.0.113.0/24 Documentation (TEST-NET-3)
    ['240.0.0.1', 'reserved (special-purpose)'], // 240.0.0.0/4 Reserved
    ['255.255.255.255', 'limited broadcast'], // 255.255.255.255/32 Limited Broadcast
    ['224.0.0.1', 'multicast'], // 224.0.0.0/4, IANA IPv4 Multicast Address Space
    ['239.255.255.250', 'multicast'],

    // IANA IPv6 Special-Purpose Address Registry
    ['::1', 'loopback'], // ::1/128 Loopback Address
    ['::', 'unspecified'], // ::/128 Unspecified Address
    ['::ffff:127.0.0.1', 'loopback (127.0.0.1 inside an IPv4-mapped address)'], // ::ffff:0:0/96 IPv4-mapped Address
    ['::ffff:a9fe:a9fe', 'link-local / cloud metadata (169.254.169.254 inside an IPv4-mapped address)'],
    ['::ffff:10.0.0.1', 'private (10.0.0.1 inside an IPv4-mapped address)'],
    ['64:ff9b::127.0.0.1', 'loopback (127.0.0.1 inside a NAT64 address)'], // 64:ff9b::/96 IPv4-IPv6 Translat.
    ['64:ff9b:0:0:0:0:a00:1', 'private (10.0.0.1 inside a NAT64 address)'],
    ['64:ff9b::c058:6301', 'reserved (special-purpose) (192.88.99.1 inside a NAT64 address)'],
    ['64:ff9b:1:ffff::808:808', 'NAT64 local-use'], // 64:ff9b:1::/48 IPv4-IPv6 Translat. (local use)
    ['64:ff9b:1::808:808', 'NAT64 local-use'],
    ['64:ff9b:1::7f00:1', 'loopback (127.0.0.1 inside a NAT64 local-use address)'],
    ['100::1', 'discard-only'], // 100::/64 Discard-Only Address Block
    ['100::ffff:ffff:ffff:ffff', 'discard-only'],
    ['100:0:0:1::1', 'dummy prefix (special-purpose)'], // 100:0:0:1::/64 Dummy IPv6 Prefix
    ['2001:1::1', 'reserved (special-purpose)'], // 2001::/23 IETF Protocol Assignments; 2001:1::1/128 PCP Anycast
    ['2001:1::2', 'reserved (special-purpose)'], // 2001:1::2/128 TURN Anycast
    ['2001:1::3', 'reserved (special-purpose)'], // 2001:1::3/128 DNS-SD SRP Anycast
    ['2001:1ff::1', 'reserved (special-purpose)'],
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'Teredo'], // 2001::/32 TEREDO (client 8.8.8.8, obfuscated)
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback (127.0.0.1 inside a Teredo address)'],
    ['2001:2::1', 'benchmarking'], // 2001:2::/48 Benchmarking
    ['2001:3::1', 'AMT'], // 2001:3::/32 AMT
    ['2001:4:112::1', 'AS112'], // 2001:4:112::/48 AS112-v6
    ['2001:10::1', 'ORCHID (deprecated)'], // 2001:10::/28 Deprecated (previously ORCHID)
    ['2001:20::1', 'ORCHIDv2'], // 2001:20::/28 ORCHIDv2
    ['2001:30::1', 'drone remote ID entity tags'], // 2001:30::/28 Drone Remote ID Protocol Entity Tags (DETs)
    ['2001:db8::1', 'reserved (special-purpose)'], // 2001:db8::/32 Documentation
    ['2002:808:808::1', '6to4'], // 2002::/16 6to4
    ['2002:7f00:1::1', 'loopback (127.0.0.1 inside a 6to4 address)'],
    ['2002:c0a8:101::1', 'private (192.168.1.1 inside a 6to4 address)'],
    ['2620:4f:8000::1', 'AS112'], // 2620:4f:8000::/48 Direct Delegation AS112 Service
    ['3fff::1', 'reserved (special-purpose)'], // 3fff::/20 Documentation
    ['5f00::1', 'segment routing (SRv6 SIDs)'], // 5f00::/16 Segment Routing (SRv6) SIDs
    ['fc00::1', 'private (unique local)'], // fc00::/7 Unique-Local
    ['fd00:ec2::254', 'private (unique local)'],
    ['fe80::1', 'link-local'], // fe80::/10 Link-Local Unicast
    ['fec0::1', 'private (site-local)'], // fec0::/10, deprecated site-local (IANA IPv6 Address Space)
    ['ff02::1', 'multicast'], // ff00::/8, IANA IPv6 Multicast Address Space

    // IPv4 inside IPv6 forms outside those rows
    ['::127.0.0.1', 'loopback (127.0.0.1 inside an IPv4-compatible address)'], // deprecated IPv4-compatible ::a.b.c.d
    ['::7f00:1', 'loopback (127.0.0.1 inside an IPv4-compatible address)'],
    ['::8.8.8.8', 'reserved (outside global unicast 2000::/3)'],
    ['::ffff:0:127.0.0.1', 'loopback (127.0.0.1 inside an IPv4-translated (SIIT) address)'], // ::ffff:0:0:0/96 SIIT
    ['::ffff:0:8.8.8.8', 'IPv4-translated (SIIT)'],
    // Outside 2000::/3, the only block the IANA IPv6 Address Space registry allocates as Global Unicast
    ['4000::1', 'reserved (outside global unicast 2000::/3)'],
    ['1::1', 'reserved (outside global unicast 2000::/3)'],
  ])('refuses %s (%s)', (address, reason) => {
    expect(blockedReason(address)).toBe(reason);
  });

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '192.0.3.1',
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '2a00:1450:4001:81d::200e',
    // Judged by the IPv4 address they carry: DNS64 answers 64:ff9b::/96 for every IPv4-only name.
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
  ])('allows global %s', (address) => {
    expect(blockedReason(address)).toBeUndefined();
  });

  it('checks URLs: https only, no credentials, names resolved before judging', async () => {
    const strict = { allowInsecure: false };
    expect((await checkWebhookUrl('http://93.184.216.34/hook', strict)).problem).toBe('must start with https://');
    expect(await checkWebhookUrl('https://user:pw@93.184.216.34/hook', strict)).toEqual({ problem: 'must not contain credentials (user name or password)' });
    expect((await checkWebhookUrl('https://93.184.216.34/hook', strict)).problem).toBeUndefined();
    expect((await checkWebhookUrl('https://[::1]:8443/hook', strict)).problem).toMatch(/loopback/);
    expect((await checkWebhookUrl('https://[::127.0.0.1]/hook', strict)).problem).toBe(
      'must not target a loopback (127.0.0.1 inside an IPv4-compatible address) address (::7f00:1)',
    );
    expect((await checkWebhookUrl('https://[2606:4700:4700::1111]/hook', strict)).problem).toBeUndefined();
    expect((await checkWebhookUrl('https://localhost/hook', strict)).problem).toMatch(/localhost resolves to .* loopback/);
    expect((await checkWebhookUrl('https://no-such-host.invalid/hook', strict)).problem).toMatch(/does not resolve/);
    const insecure = { allowInsecure: true };
    expect((await checkWebhookUrl('http://127.0.0.1:8080/hook', insecure)).problem).toBeUndefined();
    expect((await checkWebhookUrl('ftp://127.0.0.1/hook', insecure)).problem).toBe('must start with https:// or http://');
  });

  it('answers the WHATWG-normalised URL, and refuses userinfo and port 0 whatever WEBHOOK_ALLOW_INSECURE says', async () => {
    for (const allowInsecure of [false, true]) {
      const check = (url: string) => checkWebhookUrl(url, { allowInsecure });
      expect(await check('https://93.184.215.14\\@127.0.0.1/')).toEqual({ href: 'https://93.184.215.14/@127.0.0.1/' });
      expect(await check(' HTTPS://93.184.215.14:443/a/./b/../c?x#y ')).toEqual({ href: 'https://93.184.215.14/a/c?x#y' });
      for (const url of [
        'https://u@93.184.215.14/',
        'https://:p@93.184.215.14/',
        'https://@93.184.215.14/',
        'https:@93.184.215.14/',
        'https://a@b@93.184.215.14/',
      ]) {
        expect({ url, ...(await check(url)) }).toEqual({ url, problem: 'must not contain credentials (user name or password)' });
      }
      expect(await check('https://93.184.215.14:0/hook')).toEqual({ problem: 'must not use port 0' });
      expect(await check('https://93.184.215.14:000/hook')).toEqual({ problem: 'must not use port 0' });
    }
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
