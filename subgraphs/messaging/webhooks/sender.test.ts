import { Webhook as StandardWebhook } from 'standardwebhooks';
import { nativeImport } from '../../../common/native-import';
import { signingKey, standardSignature } from './sender';

describe('Standard Webhooks signature', () => {
  const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
  const TIMESTAMP = 1_614_265_330;
  const BODY = '{"test": 2432232314}';
  // Computed with the standardwebhooks library: new Webhook(SECRET).sign(ID, new Date(TIMESTAMP * 1000), BODY).
  const VECTOR = 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=';

  it('matches the fixed vector and the libraries', async () => {
    expect(standardSignature([SECRET], ID, TIMESTAMP, BODY)).toBe(VECTOR);
    expect(standardSignature([SECRET], ID, TIMESTAMP, Buffer.from(BODY))).toBe(VECTOR);
    expect(new StandardWebhook(SECRET).sign(ID, new Date(TIMESTAMP * 1000), BODY)).toBe(VECTOR);
    const { Webhook: SvixWebhook } = (await nativeImport('svix')) as typeof import('svix');
    expect(new SvixWebhook(SECRET).sign(ID, new Date(TIMESTAMP * 1000), BODY)).toBe(VECTOR);
  });

  it('keys a whsec_ secret with its base64 decoding and any other secret with its UTF-8 bytes', () => {
    expect(signingKey(SECRET)).toEqual(Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64'));
    expect(signingKey('plain-secret-ümlaut')).toEqual(Buffer.from('plain-secret-ümlaut', 'utf8'));
    const plain = 'a-plain-shared-secret';
    expect(standardSignature([plain], ID, TIMESTAMP, BODY)).toBe(
      new StandardWebhook(Buffer.from(plain, 'utf8'), { format: 'raw' }).sign(ID, new Date(TIMESTAMP * 1000), BODY),
    );
  });

  it('carries one space-separated v1 entry per secret, in the order given', () => {
    const other = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
    const both = standardSignature([other, SECRET], ID, TIMESTAMP, BODY);
    const entries = both.split(' ');
    expect(entries).toHaveLength(2);
    expect(entries[1]).toBe(VECTOR);
    expect(entries[0]).toBe(new StandardWebhook(other).sign(ID, new Date(TIMESTAMP * 1000), BODY));
    // Either secret alone verifies the pair (the libraries check the timestamp against now: sign with a fresh one).
    const now = Math.floor(Date.now() / 1000);
    const headers = { 'webhook-id': ID, 'webhook-timestamp': String(now), 'webhook-signature': standardSignature([other, SECRET], ID, now, BODY) };
    expect(() => new StandardWebhook(SECRET).verify(BODY, headers)).not.toThrow();
    expect(() => new StandardWebhook(other).verify(BODY, headers)).not.toThrow();
    expect(() => new StandardWebhook(other).verify(BODY.replace('2', '3'), headers)).toThrow(/No matching signature/);
  });
});
