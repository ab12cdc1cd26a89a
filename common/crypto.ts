import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Field encryption at rest: AES-256-GCM with a random 96-bit IV per value.
 * Stored as `v1.<keyId>.<iv>.<tag>.<ciphertext>` (base64url) so a rotation can
 * tell which key wrote a value; keyId is a short fingerprint of the key.
 */
export class FieldCipher {
  readonly keyId: string;
  private readonly keys = new Map<string, Buffer>();

  /** @param key the current key; @param previousKeys keys still accepted for reading during a rotation */
  constructor(key: Buffer, previousKeys: Buffer[] = []) {
    if (key.length !== 32) throw new Error('encryption key must be 32 bytes');
    this.keyId = FieldCipher.fingerprint(key);
    for (const k of [key, ...previousKeys]) this.keys.set(FieldCipher.fingerprint(k), k);
  }

  static fingerprint(key: Buffer): string {
    return createHash('sha256').update(key).digest('base64url').slice(0, 8);
  }

  encrypt(plaintext: string): string {
    return this.encryptBytes(Buffer.from(plaintext, 'utf8'));
  }

  decrypt(stored: string): string {
    return this.decryptBytes(stored).toString('utf8');
  }

  /** Binary content (an export archive's chunk), stored in the same format as text. */
  encryptBytes(plaintext: Buffer): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.keyId)!, iv);
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return ['v1', this.keyId, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
  }

  decryptBytes(stored: string): Buffer {
    const [version, keyId, iv, tag, body] = stored.split('.');
    const key = this.keys.get(keyId);
    if (version !== 'v1' || !key || body === undefined) throw new Error(`cannot decrypt value (key ${keyId ?? '?'} unknown)`);
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]);
  }

  encryptOptional(value: string | null | undefined): string | null {
    return value === null || value === undefined ? null : this.encrypt(value);
  }

  decryptOptional(value: string | null | undefined): string | null {
    return value === null || value === undefined ? null : this.decrypt(value);
  }

  /** True when a stored value was written with another key than the current one. */
  needsRotation(stored: string): boolean {
    return stored.split('.')[1] !== this.keyId;
  }
}
