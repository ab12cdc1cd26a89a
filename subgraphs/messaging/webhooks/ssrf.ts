import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * SSRF guard of webhook targets. A subscriber chooses the URL, so without it
 * a tenant could make CareGraph POST to its own internal network or to a
 * cloud metadata service. Addresses are checked after DNS resolution, and the
 * delivery connects to the very address that was checked (see `guardedLookup`),
 * so a name that re-resolves to an internal address (DNS rebinding) gets nowhere.
 */

const blocked = new BlockList();
const RANGES: Array<[string, number, 'ipv4' | 'ipv6', string]> = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'private (carrier-grade NAT)'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local / cloud metadata'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'reserved (IETF protocol assignments)'],
  ['192.0.2.0', 24, 'ipv4', 'reserved (documentation)'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'reserved (benchmarking)'],
  ['198.51.100.0', 24, 'ipv4', 'reserved (documentation)'],
  ['203.0.113.0', 24, 'ipv4', 'reserved (documentation)'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['fc00::', 7, 'ipv6', 'private (unique local)'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'private (site-local)'],
  ['ff00::', 8, 'ipv6', 'multicast'],
  ['2001:db8::', 32, 'ipv6', 'reserved (documentation)'],
];
for (const [network, prefix, family] of RANGES) blocked.addSubnet(network, prefix, family);

/** IPv6 forms that carry an IPv4 address: mapped (::ffff:a.b.c.d), NAT64 (64:ff9b::/96), compatible (::a.b.c.d). */
function embeddedIPv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::|::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const hi = parseInt(hex[1], 16);
    const lo = parseInt(hex[2], 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return undefined;
}

/** Why an IP address may not be a webhook target, or undefined when it may. */
export function blockedReason(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  if (family === 6) {
    const v4 = embeddedIPv4(address);
    if (v4) return blockedReason(v4);
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (!blocked.check(address, type)) return undefined;
  // BlockList says whether, not which: find the range for the message.
  for (const [network, prefix, rangeType, reason] of RANGES) {
    if (rangeType !== type) continue;
    const one = new BlockList();
    one.addSubnet(network, prefix, rangeType);
    if (one.check(address, type)) return reason;
  }
  return 'not allowed';
}

export class BlockedTargetError extends Error {
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

/**
 * Checks a subscription URL at creation/update. Returns a problem for the
 * `url` field, or undefined when the URL is acceptable.
 */
export async function checkWebhookUrl(raw: string, options: TargetCheck): Promise<string | undefined> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && !(options.allowInsecure && url.protocol === 'http:')) {
    return options.allowInsecure ? 'must start with https:// or http://' : 'must start with https://';
  }
  if (url.username || url.password) return 'must not contain credentials';
  if (options.allowInsecure) return undefined;
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
