import type { Request } from 'express';
import type { Config } from '../common/config';

/** A host name or bracketed IPv6 address with an optional port: nothing that could add a path, query or user. */
const HOST =
  /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/;

/** The base of absolute URLs in a response to this request, without a trailing slash. */
export type PublicBase = (req: Request) => string;

/**
 * Where clients reach the gateway, for absolute URLs in responses (FHIR
 * links and fullUrl, Location headers): PUBLIC_URL when set; otherwise,
 * with TRUST_PROXY, the proxy's X-Forwarded-Host and X-Forwarded-Proto;
 * otherwise the gateway's own listening address. Never the Host header:
 * any client can send any Host, and links built from it would send the next
 * request, bearer token included, to a host of the sender's choosing.
 */
export function publicBaseUrl(config: Pick<Config, 'PUBLIC_URL' | 'TRUST_PROXY'>, ownUrl: () => string): PublicBase {
  return (req) => {
    if (config.PUBLIC_URL) return config.PUBLIC_URL;
    const own = ownUrl();
    if (config.TRUST_PROXY) {
      const host = firstValue(req.headers['x-forwarded-host']);
      if (host && HOST.test(host)) {
        const proto = firstValue(req.headers['x-forwarded-proto'])?.toLowerCase();
        const scheme = proto === 'http' || proto === 'https' ? proto : new URL(own).protocol.slice(0, -1);
        return `${scheme}://${host}`;
      }
    }
    return own;
  };
}

/** A proxy chain appends values (`a, b`): the first is what the client asked for. */
function firstValue(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  return value?.split(',')[0].trim() || undefined;
}
