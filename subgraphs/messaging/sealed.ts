import type { FieldCipher } from '../../common/crypto';
import type { Message as MessageRow } from './db/generated/client';

/**
 * Patient content at rest in the messaging schema (message bodies, subjects and
 * variables, reply text, event data, webhook payloads) is stored as FieldCipher
 * ciphertext in `…Enc` columns. Rows written before that hold plaintext in the
 * old columns until start-up seals them (keys/seal.ts); readers accept both.
 */
export function sealJson(cipher: FieldCipher, value: unknown): string {
  return cipher.encrypt(JSON.stringify(value));
}

export function openJson<T>(cipher: FieldCipher, sealed: string | null, legacy: unknown): T {
  return (sealed !== null ? JSON.parse(cipher.decrypt(sealed)) : legacy) as T;
}

export function openText(cipher: FieldCipher, sealed: string | null, legacy: string | null): string | null {
  return sealed !== null ? cipher.decrypt(sealed) : legacy;
}

/** A message as callers see it: its content in plaintext, the ciphertext columns left out. */
export type MessageView = Omit<MessageRow, 'body' | 'subject' | 'variables' | 'bodyEnc' | 'subjectEnc' | 'variablesEnc'> & {
  body: string;
  subject: string | null;
  variables: Record<string, string>;
};

/**
 * The content is decrypted when first read: a page of an inbox (id, status, dates) never asks for it, and three
 * decryptions per message were the largest item of our own code in a profile of the federated query.
 */
export function openMessage(cipher: FieldCipher, row: MessageRow): MessageView {
  const { body, subject, variables, bodyEnc, subjectEnc, variablesEnc, ...rest } = row;
  let opened: { body: string; subject: string | null; variables: Record<string, string> } | undefined;
  const open = () =>
    (opened ??= {
      body: openText(cipher, bodyEnc, body) ?? '',
      subject: openText(cipher, subjectEnc, subject),
      variables: openJson<Record<string, string>>(cipher, variablesEnc, variables) ?? {},
    });
  return {
    ...rest,
    get body() {
      return open().body;
    },
    get subject() {
      return open().subject;
    },
    get variables() {
      return open().variables;
    },
  };
}
