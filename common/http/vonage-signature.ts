import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export type VonageSignatureMethod = 'md5hash' | 'md5' | 'sha1' | 'sha256' | 'sha512';

/**
 * Vonage's signature of an SMS API request or webhook (its "signing messages" guide): every parameter but `sig`,
 * sorted by name, as `&name=value` with `&` and `=` in values replaced by `_`; then either the MD5 hash of that
 * string followed by the signature secret (`md5hash`), or its HMAC keyed with the secret. Hex; Vonage sends it
 * upper- or lower-case.
 */
export function vonageSignature(secret: string, params: Record<string, string>, method: VonageSignatureMethod): string {
  const data = Object.keys(params)
    .filter((key) => key !== 'sig')
    .sort()
    .map((key) => `&${key}=${params[key].replace(/[&=]/g, '_')}`)
    .join('');
  if (method === 'md5hash')
    return createHash('md5')
      .update(data + secret, 'utf8')
      .digest('hex');
  return createHmac(method, secret).update(data, 'utf8').digest('hex');
}

/** Whether `params.sig` signs `params`, and `params.timestamp` (unix seconds) is within `maxSkewSeconds` of `now`: an old signed request is a replay. */
export function verifyVonageSignature(secret: string, params: Record<string, string>, method: VonageSignatureMethod, now: Date, maxSkewSeconds = 300): boolean {
  const given = params.sig;
  const timestamp = Number(params.timestamp);
  if (!given || !Number.isFinite(timestamp) || Math.abs(now.getTime() / 1000 - timestamp) > maxSkewSeconds) return false;
  const expected = Buffer.from(vonageSignature(secret, params, method));
  const actual = Buffer.from(given.toLowerCase());
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
