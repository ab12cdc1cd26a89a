import { readEnvelope, SoapFault } from '../../../common/soap';
import { compositionFromXml } from '../clinical/opt/rm-xml';
import { parseOpt } from '../clinical/opt/parse';
import { EbXmlError, readRegister } from './xds/ebrim';

/**
 * Every reader of XML from outside classifies hostile XML as bad input of its
 * own protocol (a SOAP Sender fault, VALIDATION_ERROR, an ebXML registry
 * error), never as a plain error that surfaces as a 500. test/xml-input.e2e.test.ts
 * shows the HTTP answers.
 */
const ATTACKS: Array<[string, (root: string) => string]> = [
  ['an external entity', (root) => `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><${root}>&e;</${root}>`],
  ['a parameter entity', (root) => `<!DOCTYPE x [<!ENTITY % p SYSTEM "http://127.0.0.1:9/evil.dtd"> %p;]><${root}/>`],
  [
    'exponential internal entities',
    (root) =>
      `<!DOCTYPE x [<!ENTITY l0 "lol">${Array.from({ length: 9 }, (_, i) => `<!ENTITY l${i + 1} "${`&l${i};`.repeat(10)}">`).join('')}]><${root}>&l9;</${root}>`,
  ],
  ['an oversized internal entity', (root) => `<!DOCTYPE x [<!ENTITY big "${'A'.repeat(500_000)}">]><${root}>&big;</${root}>`],
  ['100,000 nested elements', (root) => `<${root}>${'<n>'.repeat(100_000)}${'</n>'.repeat(100_000)}</${root}>`],
];

describe.each(ATTACKS)('XML with %s', (_what, document) => {
  it('is a SOAP Sender fault in an envelope', () => {
    const envelope = document('s:Envelope xmlns:s="http://www.w3.org/2003/05/soap-envelope"').replace(/<\/s:Envelope xmlns:s="[^"]*">$/, '</s:Envelope>');
    expect(() => readEnvelope(envelope)).toThrow(
      expect.objectContaining({ constructor: SoapFault, code: 'Sender', message: expect.stringMatching(/^The SOAP message is refused: /) }),
    );
  });

  it('is an ebXML registry error in an XDS request', () => {
    expect(() => readRegister(document('SubmitObjectsRequest'))).toThrow(EbXmlError);
  });

  it('is VALIDATION_ERROR as an operational template and as a canonical composition', () => {
    for (const read of [parseOpt, compositionFromXml]) {
      expect(() => read(document(read === parseOpt ? 'template' : 'composition'))).toThrow(
        expect.objectContaining({ code: 'VALIDATION_ERROR', message: expect.stringMatching(/ refused: /) }),
      );
    }
  });
});

describe('what stays accepted', () => {
  it('reads markup-like text inside comments and CDATA, and nesting up to the limit', () => {
    const deep = (levels: number) => `<template>${'<n>'.repeat(levels - 1)}${'</n>'.repeat(levels - 1)}</template>`;
    expect(() => parseOpt(`<!-- <!DOCTYPE x> --><template><a><![CDATA[<!ENTITY e "x"> <b>]]></a></template>`)).toThrow(/Not an operational template/);
    expect(() => parseOpt(deep(100))).toThrow(/Not an operational template/);
    expect(() => parseOpt(deep(101))).toThrow(/nest deeper than 100 levels/);
  });
});
