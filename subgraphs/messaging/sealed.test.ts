import { randomBytes } from 'node:crypto';
import { FieldCipher } from '../../common/crypto';
import type { Message as MessageRow } from './db/generated/client';
import { openMessage, sealJson } from './sealed';

const cipher = new FieldCipher(randomBytes(32));
const row = (fields: Partial<MessageRow>) =>
  ({ id: 'm-1', status: 'queued', body: null, subject: null, variables: null, bodyEnc: null, subjectEnc: null, variablesEnc: null, ...fields }) as MessageRow;

describe('openMessage', () => {
  it('opens sealed content, and legacy plaintext rows', () => {
    const sealed = openMessage(
      cipher,
      row({ bodyEnc: cipher.encrypt('Hi Ann'), subjectEnc: cipher.encrypt('Visit'), variablesEnc: sealJson(cipher, { time: '09:30' }) }),
    );
    expect(sealed).toMatchObject({ id: 'm-1', body: 'Hi Ann', subject: 'Visit', variables: { time: '09:30' } });
    expect(sealed).not.toHaveProperty('bodyEnc');
    expect({ ...openMessage(cipher, row({ body: 'old', variables: { a: 'b' } })) }).toMatchObject({ body: 'old', subject: null, variables: { a: 'b' } });
    expect(openMessage(cipher, row({})).body).toBe('');
  });

  it('decrypts only when the content is read, and once', () => {
    // Ciphertext of another key: reading the content fails, so only a read can have decrypted it.
    const foreign = new FieldCipher(randomBytes(32));
    const view = openMessage(cipher, row({ bodyEnc: foreign.encrypt('secret') }));
    expect(view.id).toBe('m-1');
    expect(view.status).toBe('queued');
    expect(() => view.body).toThrow();

    const opened = openMessage(cipher, row({ variablesEnc: sealJson(cipher, { time: '09:30' }) }));
    expect(opened.variables).toBe(opened.variables);
  });
});
