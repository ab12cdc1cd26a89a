import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Twilio's request signature: base64 HMAC-SHA1, keyed with the auth token,
 * of the full URL followed by every POST parameter name and value, sorted by name.
 * The gateway checks it on the provider's webhooks; tests sign with it.
 */
export function twilioSignature(authToken: string, url: string, params: Record<string, string>): string {
  const data = Object.keys(params)
    .sort()
    .reduce((acc, key) => acc + key + params[key], url);
  return createHmac('sha1', authToken).update(Buffer.from(data, 'utf8')).digest('base64');
}

export function verifyTwilioSignature(authToken: string, url: string, params: Record<string, string>, signature: string | undefined): boolean {
  if (!signature) return false;
  const expected = Buffer.from(twilioSignature(authToken, url, params));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
