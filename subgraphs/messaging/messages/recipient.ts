import { createHmac } from 'node:crypto';

/** E.164-ish normal form: digits with a leading +, so '+31 6 1234' and '+3161234' match. */
function normalizePhone(phone: string): string {
  const digits = phone.replace(/[^\d]/g, '');
  return phone.trim().startsWith('+') ? `+${digits}` : digits;
}

/** A keyed hash of a phone number: finds the conversation of an inbound SMS without storing the number in clear. */
export function phoneHash(key: Buffer, phone: string): string {
  return createHmac('sha256', key)
    .update(`phone:${normalizePhone(phone)}`)
    .digest('base64url');
}
