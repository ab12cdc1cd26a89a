import { createHash, randomUUID } from 'node:crypto';

/** The IHE MHD list types code system (SubmissionSet, Folder). */
export const LIST_TYPES = 'https://profiles.ihe.net/ITI/MHD/CodeSystem/MHDlistTypes';
/** A fresh OID under the test arc, for document and submission set unique ids. */
export const uid = () => `2.999.8.${Date.now()}.${Math.floor(Math.random() * 1e6)}`;
export const sha1 = (bytes: Buffer) => createHash('sha1').update(bytes).digest();

export interface BundleOptions {
  patient?: string;
  docUniqueId: string;
  setUniqueId?: string;
  document: Buffer;
  /** Changes to the DocumentReference. */
  doc?: (doc: any) => void;
}

/** An ITI-65 Provide Document Bundle (Comprehensive Metadata): List, DocumentReference, Binary. */
export function provideBundle(o: BundleOptions) {
  const [listUrl, docUrl, binUrl] = [randomUUID(), randomUUID(), randomUUID()].map((u) => `urn:uuid:${u}`);
  const subject = { reference: `Patient/${o.patient ?? 'p-1001'}` };
  const doc: any = {
    resourceType: 'DocumentReference',
    masterIdentifier: { system: 'urn:ietf:rfc:3986', value: `urn:oid:${o.docUniqueId}` },
    status: 'current',
    type: { coding: [{ system: 'http://loinc.org', code: '34133-9', display: 'Summary of episode note' }] },
    category: [{ coding: [{ system: 'http://loinc.org', code: '34133-9' }] }],
    subject,
    securityLabel: [{ coding: [{ system: 'http://terminology.hl7.org/CodeSystem/v3-Confidentiality', code: 'N' }] }],
    content: [
      {
        attachment: {
          contentType: 'text/plain',
          language: 'en-US',
          url: binUrl,
          size: o.document.length,
          hash: sha1(o.document).toString('base64'),
          title: 'Discharge summary',
          creation: '2026-11-20T10:15:00Z',
        },
        format: { system: 'urn:oid:1.3.6.1.4.1.19376.1.2.3', code: 'urn:ihe:iti:xds:2017:mimeTypeSufficient' },
      },
    ],
    context: {
      period: { start: '2026-11-19T08:00:00Z', end: '2026-11-20T09:00:00Z' },
      facilityType: { coding: [{ system: 'http://snomed.info/sct', code: '22232009' }] },
      practiceSetting: { coding: [{ system: 'http://snomed.info/sct', code: '394802001' }] },
    },
  };
  o.doc?.(doc);
  return {
    resourceType: 'Bundle',
    type: 'transaction',
    entry: [
      {
        fullUrl: listUrl,
        resource: {
          resourceType: 'List',
          extension: [{ url: 'https://profiles.ihe.net/ITI/MHD/StructureDefinition/ihe-sourceId', valueIdentifier: { value: 'urn:oid:2.999.1.9' } }],
          identifier: [{ use: 'usual', system: 'urn:ietf:rfc:3986', value: `urn:oid:${o.setUniqueId ?? uid()}` }],
          status: 'current',
          mode: 'working',
          code: { coding: [{ system: LIST_TYPES, code: 'submissionset' }] },
          subject,
          date: '2026-11-20T10:20:00Z',
          entry: [{ item: { reference: docUrl } }],
        },
        request: { method: 'POST', url: 'List' },
      },
      { fullUrl: docUrl, resource: doc, request: { method: 'POST', url: 'DocumentReference' } },
      {
        fullUrl: binUrl,
        resource: { resourceType: 'Binary', contentType: 'text/plain', data: o.document.toString('base64') },
        request: { method: 'POST', url: 'Binary' },
      },
    ],
  };
}
