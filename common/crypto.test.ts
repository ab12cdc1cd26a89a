import { randomBytes } from 'node:crypto';
import { FieldCipher } from './crypto';

describe('FieldCipher', () => {
  it('[SEC-009] round-trips and never stores plaintext', () => {
    const cipher = new FieldCipher(randomBytes(32));
    const stored = cipher.encrypt('+15551234567');
    expect(stored).not.toContain('5551234567');
    expect(cipher.decrypt(stored)).toBe('+15551234567');
  });

  it('detects tampering', () => {
    const cipher = new FieldCipher(randomBytes(32));
    const parts = cipher.encrypt('secret').split('.');
    parts[4] = Buffer.from('other').toString('base64url');
    expect(() => cipher.decrypt(parts.join('.'))).toThrow();
  });

  it('reads values of a previous key during rotation', () => {
    const oldKey = randomBytes(32);
    const stored = new FieldCipher(oldKey).encrypt('x@example.org');
    const rotated = new FieldCipher(randomBytes(32), [oldKey]);
    expect(rotated.needsRotation(stored)).toBe(true);
    expect(rotated.decrypt(stored)).toBe('x@example.org');
  });

  it('round-trips binary content that is not UTF-8', () => {
    const cipher = new FieldCipher(randomBytes(32));
    const bytes = Buffer.from([0x50, 0x4b, 0x03, 0x04, 0xff, 0xfe, 0x00, 0x80]);
    const stored = cipher.encryptBytes(bytes);
    expect(stored.startsWith(`v1.${cipher.keyId}.`)).toBe(true);
    expect(cipher.decryptBytes(stored).equals(bytes)).toBe(true);
  });
});
