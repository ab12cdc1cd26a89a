import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * SSRF guard of webhook targets. A subscriber chooses the URL, so without it
 * a tenant could make CareGraph POST to its own internal network or to a
 * cloud metadata service. Addresses are checked after DNS resolution, and the
 * delivery connects to the very address that was checked (see `guardedLookup`),
 * so a name that re-resolves to an internal address (DNS rebinding) gets nowhere.
 *
 * Only global unicast addresses are allowed. The special blocks come from
 * ipaddr.js's `range()`, which encodes the IANA IPv4 and IPv6 Special-Purpose
 * Address Registries (every row of both, as of ipaddr.js 2.5, except the one
 * added below); anything `range()` does not call plain `unicast` is refused.
 * IPv6 must moreover lie in 2000::/3, the only block the IANA IPv6 Address
 * Space registry allocates as Global Unicast. An IPv4 address carried inside
 * IPv6 (mapped, compatible, SIIT, NAT64, 6to4, Teredo) is judged too, so
 * `[::ffff:0:127.0.0.1]` is loopback whatever its outer block.
 */

/** What each ipaddr.js range is, for messages; a range missing here is refused under its own name. */
const IPV4_RANGES: Record<string, string> = {
  unspecified: 'unspecified ("this network")',
  broadcast: 'limited broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local / cloud metadata',
  loopback: 'loopback',
  carrierGradeNat: 'private (carrier-grade NAT)',
  private: 'private',
  reserved: 'reserved (special-purpose)',
  as112: 'AS112 (special-purpose)',
  amt: 'AMT (special-purpose)',
};
const IPV6_RANGES: Record<string, string> = {
  unspecified: 'unspecified',
  linkLocal: 'link-local',
  multicast: 'multicast',
  loopback: 'loopback',
  uniqueLocal: 'private (unique local)',
  deprecatedSiteLocal: 'private (site-local)',
  discard: 'discard-only',
  rfc6145: 'IPv4-translated (SIIT)',
  rfc6052: 'NAT64 local-use',
  '6to4': '6to4',
  teredo: 'Teredo',
  benchmarking: 'benchmarking',
  amt: 'AMT',
  as112v6: 'AS112',
  deprecatedOrchid: 'ORCHID (deprecated)',
  orchid2: 'ORCHIDv2',
  droneRemoteIdProtocolEntityTags: 'drone remote ID entity tags',
  segmentRouting: 'segment routing (SRv6 SIDs)',
  reserved: 'reserved (special-purpose)',
};

/** IANA IPv6 Special-Purpose Address Registry rows ipaddr.js 2.5 does not name yet. */
const IPV6_REGISTRY_GAPS: Array<[ipaddr.IPv6, number, string]> = [
  // Row "Dummy IPv6 Prefix", 100:0:0:1::/64.
  [ipaddr.IPv6.parse('100:0:0:1::'), 64, 'dummy prefix (special-purpose)'],
];
/** IANA IPv6 Address Space registry row "Global Unicast". */
const GLOBAL_UNICAST: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse('2000::'), 3];
/** IANA IPv6 Special-Purpose Address Registry row "IPv4-IPv6 Translat." 64:ff9b::/96: globally reachable, so judged by its IPv4 address. */
const NAT64_WELL_KNOWN: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse('64:ff9b::'), 96];

const ipv4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 255, lo >> 8, lo & 255]);

/** The IPv4 address an IPv6 address carries, and in which form, if it is one of the forms that do. */
function embeddedIPv4(address: ipaddr.IPv6): { ipv4: ipaddr.IPv4; form: string } | undefined {
  const p = address.parts;
  const last = () => ipv4(p[6], p[7]);
  switch (address.range()) {
    case 'ipv4Mapped':
      return { ipv4: last(), form: 'an IPv4-mapped address' };
    case 'rfc6145':
      return { ipv4: last(), form: 'an IPv4-translated (SIIT) address' };
    case 'rfc6052':
      // RFC 6052 /96 layout, the well-known prefix's and the usual local-use one.
      return { ipv4: last(), form: address.match(NAT64_WELL_KNOWN) ? 'a NAT64 address' : 'a NAT64 local-use address' };
    case '6to4':
      return { ipv4: ipv4(p[1], p[2]), form: 'a 6to4 address' };
    case 'teredo':
      // The client's public address is stored bit-inverted in the last 32 bits (RFC 4380).
      return { ipv4: ipv4(~p[6] & 0xffff, ~p[7] & 0xffff), form: 'a Teredo address' };
    default:
      // Deprecated IPv4-compatible ::a.b.c.d (:: and ::1 are ranges of their own).
      return p.slice(0, 6).every((part) => part === 0) ? { ipv4: last(), form: 'an IPv4-compatible address' } : undefined;
  }
}

function ipv4Reason(address: ipaddr.IPv4): string | undefined {
  const range = address.range();
  return range === 'unicast' ? undefined : (IPV4_RANGES[range] ?? range);
}

function ipv6Reason(address: ipaddr.IPv6): string | undefined {
  const range = address.range();
  if (range === 'unspecified' || range === 'loopback') return IPV6_RANGES[range];
  const embedded = embeddedIPv4(address);
  if (embedded) {
    const reason = ipv4Reason(embedded.ipv4);
    if (reason) return `${reason} (${embedded.ipv4.toString()} inside ${embedded.form})`;
    if (range === 'ipv4Mapped' || address.match(NAT64_WELL_KNOWN)) return undefined;
  }
  if (range !== 'unicast') return IPV6_RANGES[range] ?? range;
  const gap = IPV6_REGISTRY_GAPS.find(([network, prefix]) => address.match(network, prefix));
  if (gap) return gap[2];
  return address.match(GLOBAL_UNICAST) ? undefined : 'reserved (outside global unicast 2000::/3)';
}

/**
 * `…:a.b.c.d` → `…:xxxx:xxxx`. ipaddr.js 2.5 parses `::a.b.c.d` (IPv4-compatible)
 * as `::ffff:a.b.c.d` (IPv4-mapped), so the dotted form never reaches it.
 */
function hexTail(address: string): string {
  const dotted = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  if (!dotted) return address;
  const [a, b, c, d] = dotted.slice(2).map(Number);
  return `${dotted[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/** Why an IP address may not be a webhook target, or undefined when it may. */
export function blockedReason(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  const parsed = ipaddr.parse(family === 6 ? hexTail(address) : address);
  return family === 4 ? ipv4Reason(parsed as ipaddr.IPv4) : ipv6Reason(parsed as ipaddr.IPv6);
}

class BlockedTargetError extends Error {
  readonly code = 'EWEBHOOKTARGET';
}

/** Strips the brackets of an IPv6 literal host (`[::1]` → `::1`). */
export function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

function resolveAll(hostname: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses)));
  });
}

/** Every address the name resolves to must be allowed: one internal address is enough to refuse. */
function refuseBlocked(hostname: string, addresses: LookupAddress[]): void {
  for (const { address } of addresses) {
    const reason = blockedReason(address);
    if (reason) throw new BlockedTargetError(`${hostname} resolves to ${address}, a ${reason} address`);
  }
}

export interface TargetCheck {
  allowInsecure: boolean;
}

/** A subscription URL as stored (`href`), or why it is refused. */
type WebhookUrlCheck = { href: string; problem?: undefined } | { href?: undefined; problem: string };

/**
 * Whether the raw URL has userinfo: an `@` in its authority, empty userinfo
 * included. Read as WHATWG does (the authority ends at / \ ? #), so
 * `https://a.example\@b.example/` has none (its `@` is in the path).
 */
const hasUserinfo = (raw: string) => /@/.test(raw.replace(/^[a-z][a-z\d+.-]*:[/\\]*/i, '').split(/[/\\?#]/)[0]);

/**
 * Checks a subscription URL at creation/update: the WHATWG-normalised URL to
 * store, so what is stored is what every later reader parses alike, or a
 * problem for the `url` field.
 */
export async function checkWebhookUrl(raw: string, options: TargetCheck): Promise<WebhookUrlCheck> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { problem: 'must be an absolute URL' };
  }
  if (url.protocol !== 'https:' && !(options.allowInsecure && url.protocol === 'http:')) {
    return { problem: options.allowInsecure ? 'must start with https:// or http://' : 'must start with https://' };
  }
  if (url.username || url.password || hasUserinfo(raw.trim())) return { problem: 'must not contain credentials (user name or password)' };
  if (url.port === '0') return { problem: 'must not use port 0' };
  const problem = options.allowInsecure ? undefined : await targetProblem(url);
  return problem ? { problem } : { href: url.href };
}

/** Why the URL's host is no allowed target (an internal address, or a name that resolves to one). */
async function targetProblem(url: URL): Promise<string | undefined> {
  const host = hostOf(url);
  if (isIP(host)) {
    const reason = blockedReason(host);
    return reason ? `must not target a ${reason} address (${host})` : undefined;
  }
  let addresses: LookupAddress[];
  try {
    addresses = await resolveAll(host);
  } catch {
    return `host '${host}' does not resolve`;
  }
  try {
    refuseBlocked(host, addresses);
  } catch (err) {
    return `must not target an internal address: ${(err as Error).message}`;
  }
  return undefined;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net/tls.connect (undici's `connect` options): resolves the
 * name, refuses internal addresses, and hands the socket exactly the checked
 * addresses, so the check and the connection cannot disagree.
 */
export function guardedLookup(options: TargetCheck) {
  return (hostname: string, lookupOptions: { all?: boolean; family?: number }, callback: LookupCallback): void => {
    resolveAll(hostname).then(
      (addresses) => {
        let usable: LookupAddress[];
        try {
          if (!options.allowInsecure) refuseBlocked(hostname, addresses);
          usable = lookupOptions.family ? addresses.filter((a) => a.family === lookupOptions.family) : addresses;
          if (usable.length === 0) throw Object.assign(new Error(`${hostname} has no usable address`), { code: 'ENOTFOUND' });
        } catch (err) {
          callback(err as NodeJS.ErrnoException, '');
          return;
        }
        if (lookupOptions.all) callback(null, usable);
        else callback(null, usable[0].address, usable[0].family);
      },
      (err) => callback(err as NodeJS.ErrnoException, ''),
    );
  };
}
