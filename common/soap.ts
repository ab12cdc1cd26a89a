import { randomUUID } from 'node:crypto';
import { XMLParser } from 'fast-xml-parser';
import { parseUntrustedXml, xmlWriter as builder } from './xml';
import { AppError, validationError } from './errors';

/**
 * SOAP 1.2 envelopes with WS-Addressing, and MTOM/XOP (multipart/related;
 * type="application/xop+xml") as the IHE ITI transactions use them
 * (ITI TF-2 Appendix V). What the Body carries is not read here.
 */

const SOAP12 = 'http://www.w3.org/2003/05/soap-envelope';
const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';
const WSA = 'http://www.w3.org/2005/08/addressing';
const XOP = 'http://www.w3.org/2004/08/xop/include';

export interface SoapRequest {
  action: string;
  messageId?: string;
  /** The Body's content as sent, documents inline (XOP includes replaced by the parts' base64). */
  payload: string;
  mtom: boolean;
}

/** A fault of SOAP itself (SOAP 1.2 Part 1 §5.4.6): VersionMismatch, or a WS-Addressing fault. */
export class SoapFault extends Error {
  constructor(
    readonly code: 'VersionMismatch' | 'Sender' | 'Receiver',
    readonly subcode: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

const headerParser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', removeNSPrefix: true, parseTagValue: false, trimValues: true });

interface MimePart {
  headers: Record<string, string>;
  body: Buffer;
}

/** The parts of a multipart body (RFC 2046), headers lower-cased. */
function multipartParts(body: Buffer, boundary: string): MimePart[] {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: MimePart[] = [];
  let at = body.indexOf(delimiter);
  if (at < 0) throw validationError('The multipart body has no part with its boundary');
  for (;;) {
    at += delimiter.length;
    if (body.subarray(at, at + 2).toString() === '--') return parts;
    const start = body.indexOf('\r\n', at);
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), start);
    if (start < 0 || next < 0) throw validationError('The multipart body ends without its closing boundary');
    const part = body.subarray(start + 2, next);
    const split = part.indexOf('\r\n\r\n');
    if (split < 0) throw validationError('A MIME part has no header end');
    const headers: Record<string, string> = {};
    for (const line of part.subarray(0, split).toString('latin1').split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    parts.push({ headers, body: part.subarray(split + 4) });
    at = next + 2;
  }
}

/** A parameter of a Content-Type header (quoted or not). */
function contentTypeParam(contentType: string, name: string): string | undefined {
  const match = new RegExp(`;\\s*${name}\\s*=\\s*(?:"([^"]*)"|([^;\\s]+))`, 'i').exec(contentType);
  return match ? (match[1] ?? match[2]) : undefined;
}

const stripAngles = (id: string) => id.trim().replace(/^<(.*)>$/, '$1');

function utf8(bytes: Buffer, what: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw validationError(`${what} is not valid UTF-8`);
  }
}

/**
 * The SOAP message of a request body: `application/soap+xml`, or MTOM
 * (the root part `application/xop+xml`, every xop:Include replaced by the
 * base64 of the part its cid names, which is what XOP decoding means).
 */
export function readSoapMessage(contentType: string, body: Buffer): { envelope: string; mtom: boolean } {
  const type = contentType.split(';')[0].trim().toLowerCase();
  if (type === 'application/soap+xml') return { envelope: utf8(body, 'The SOAP envelope'), mtom: false };
  if (type === 'text/xml') throw new SoapFault('VersionMismatch', undefined, 'SOAP 1.1 (text/xml) is not supported: send SOAP 1.2 (application/soap+xml)');
  if (type !== 'multipart/related')
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', `Send SOAP 1.2 as application/soap+xml or MTOM (multipart/related), got '${contentType || 'none'}'`);
  const boundary = contentTypeParam(contentType, 'boundary');
  if (!boundary) throw validationError('multipart/related without a boundary');
  const parts = multipartParts(body, boundary);
  const start = contentTypeParam(contentType, 'start');
  const root = start ? parts.find((p) => stripAngles(p.headers['content-id'] ?? '') === stripAngles(start)) : parts[0];
  if (!root || !/^application\/xop\+xml/i.test(root.headers['content-type'] ?? '')) throw validationError('The MTOM root part must be application/xop+xml');
  const byCid = new Map(parts.filter((p) => p !== root).map((p) => [stripAngles(p.headers['content-id'] ?? ''), p]));
  const xml = utf8(root.body, 'The SOAP envelope').replace(
    /<([A-Za-z_][\w.-]*:)?Include\b([^>]*?)(?:\/>|>\s*<\/\1Include\s*>)/g,
    (_all: string, _prefix: string | undefined, attributes: string) => {
      const href = /\bhref\s*=\s*["']cid:([^"']+)["']/.exec(attributes)?.[1];
      const part = href ? byCid.get(decodeURIComponent(href)) : undefined;
      if (!part) throw validationError(`xop:Include names no part of this message (${href ?? 'no href'})`);
      const encoding = (part.headers['content-transfer-encoding'] ?? 'binary').toLowerCase();
      return encoding === 'base64' ? part.body.toString('latin1').replace(/\s+/g, '') : part.body.toString('base64');
    },
  );
  return { envelope: xml, mtom: true };
}

/** The Action, MessageID and Body content of a SOAP 1.2 envelope. */
export function readEnvelope(xml: string): Omit<SoapRequest, 'mtom'> {
  const parsed = parseUntrustedXml(headerParser, xml, (reason) => new SoapFault('Sender', undefined, `The SOAP message is ${reason}`));
  const open = /<([A-Za-z_][\w.-]*:)?Envelope\b([^>]*)>/.exec(xml);
  if (!open) throw new SoapFault('Sender', undefined, 'The message is not a SOAP envelope');
  const prefix = open[1] ?? '';
  const ns = new RegExp(`xmlns${prefix ? `:${prefix.slice(0, -1)}` : ''}\\s*=\\s*["']([^"']+)["']`).exec(open[2])?.[1];
  if (ns === SOAP11) throw new SoapFault('VersionMismatch', undefined, 'SOAP 1.1 is not supported: send SOAP 1.2');
  if (ns !== SOAP12) throw new SoapFault('VersionMismatch', undefined, `The envelope is not in the SOAP 1.2 namespace ${SOAP12}`);
  const header = (parsed as Record<string, any>).Envelope?.Header ?? {};
  const textOf = (value: unknown) => (typeof value === 'string' ? value : typeof (value as any)?.['#text'] === 'string' ? (value as any)['#text'] : undefined);
  const action = textOf(header.Action);
  if (!action) throw new SoapFault('Sender', 'wsa:MessageAddressingHeaderRequired', 'The WS-Addressing Action header is required');
  const bodyOpen = new RegExp(`<${prefix}Body\\b[^>]*>`).exec(xml);
  const bodyClose = xml.lastIndexOf(`</${prefix}Body>`);
  if (!bodyOpen || bodyClose < 0) throw new SoapFault('Sender', undefined, 'The SOAP envelope has no Body');
  return { action: action.trim(), messageId: textOf(header.MessageID)?.trim(), payload: xml.slice(bodyOpen.index + bodyOpen[0].length, bodyClose).trim() };
}

/** A response envelope around a payload (already XML) with its Action and RelatesTo. */
export function envelope(action: string, relatesTo: string | undefined, payload: string): string {
  return envelopeWith({ 'wsa:MessageID': `urn:uuid:${randomUUID()}`, ...(relatesTo ? { 'wsa:RelatesTo': relatesTo } : {}) }, action, payload);
}

/** A request envelope to an endpoint (WS-Addressing To, a fresh MessageID, ReplyTo anonymous as ITI TF-2 Appendix V asks). */
export function requestEnvelope(action: string, to: string, payload: string): { xml: string; messageId: string } {
  const messageId = `urn:uuid:${randomUUID()}`;
  const headers = {
    'wsa:To': { '@soap:mustUnderstand': 'true', '#text': to },
    'wsa:MessageID': { '@soap:mustUnderstand': 'true', '#text': messageId },
    'wsa:ReplyTo': { '@soap:mustUnderstand': 'true', 'wsa:Address': `${WSA}/anonymous` },
  };
  return { xml: envelopeWith(headers, action, payload), messageId };
}

function envelopeWith(headers: Record<string, unknown>, action: string, payload: string): string {
  const header = builder.build({ 'soap:Header': { 'wsa:Action': { '@soap:mustUnderstand': 'true', '#text': action }, ...headers } });
  return `<?xml version="1.0" encoding="UTF-8"?><soap:Envelope xmlns:soap="${SOAP12}" xmlns:wsa="${WSA}">${header}<soap:Body>${payload.replace(/^<\?xml[^>]*\?>/, '')}</soap:Body></soap:Envelope>`;
}

/** A SOAP 1.2 fault envelope (Code, Subcode, Reason). */
export function faultEnvelope(code: 'VersionMismatch' | 'Sender' | 'Receiver', subcode: string | undefined, reason: string, relatesTo?: string): string {
  const fault = builder.build({
    'soap:Fault': {
      'soap:Code': {
        'soap:Value': `soap:${code}`,
        ...(subcode ? { 'soap:Subcode': { 'soap:Value': subcode } } : {}),
      },
      'soap:Reason': { 'soap:Text': { '@xml:lang': 'en', '#text': reason } },
    },
  });
  const withNamespaces = fault.replace('<soap:Fault>', '<soap:Fault xmlns:cg="urn:caregraph:errors">');
  return envelope(`${WSA}/fault`, relatesTo, withNamespaces);
}

/**
 * An MTOM message (multipart/related, root application/xop+xml): the text
 * of each element `<tag>` (attributes kept) that holds base64 goes into a
 * binary part of its own, replaced by an xop:Include of it.
 */
export function mtomMessage(xml: string, binaryElement?: string): { contentType: string; body: Buffer } {
  const boundary = `MIMEBoundary_${randomUUID().replace(/-/g, '')}`;
  const rootId = `root.${randomUUID()}@caregraph`;
  const attachments: Array<{ id: string; bytes: Buffer }> = [];
  const root = binaryElement
    ? xml.replace(new RegExp(`<${binaryElement}(\\s[^>]*)?>([A-Za-z0-9+/=\\s]*)</${binaryElement}>`, 'g'), (_all: string, attributes = '', base64: string) => {
        const id = `${randomUUID()}@caregraph`;
        attachments.push({ id, bytes: Buffer.from(base64.replace(/\s+/g, ''), 'base64') });
        return `<${binaryElement}${attributes}><xop:Include xmlns:xop="${XOP}" href="cid:${encodeURIComponent(id)}"/></${binaryElement}>`;
      })
    : xml;
  const chunks: Buffer[] = [
    Buffer.from(
      `--${boundary}\r\nContent-Type: application/xop+xml; charset=UTF-8; type="application/soap+xml"\r\nContent-Transfer-Encoding: 8bit\r\nContent-ID: <${rootId}>\r\n\r\n`,
    ),
    Buffer.from(root, 'utf8'),
  ];
  for (const a of attachments) {
    chunks.push(
      Buffer.from(`\r\n--${boundary}\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: binary\r\nContent-ID: <${a.id}>\r\n\r\n`),
      a.bytes,
    );
  }
  chunks.push(Buffer.from(`\r\n--${boundary}--\r\n`));
  return {
    contentType: `multipart/related; type="application/xop+xml"; boundary="${boundary}"; start="<${rootId}>"; start-info="application/soap+xml"`,
    body: Buffer.concat(chunks),
  };
}

/** The Code, Subcode and Reason of a SOAP 1.2 fault in a Body's content, or undefined when it holds none. */
export function readFault(payload: string): { code: string; subcode?: string; reason: string } | undefined {
  if (!/^<([A-Za-z_][\w.-]*:)?Fault\b/.test(payload.trim())) return undefined;
  const fault =
    (parseUntrustedXml(headerParser, payload, (reason) => new SoapFault('Sender', undefined, `The SOAP fault is ${reason}`)) as Record<string, any>).Fault ??
    {};
  const textOf = (value: unknown): string => (typeof value === 'string' ? value : typeof (value as any)?.['#text'] === 'string' ? (value as any)['#text'] : '');
  const reason = [fault.Reason?.Text].flat()[0];
  return {
    code: textOf(fault.Code?.Value).replace(/^[\w.-]+:/, ''),
    subcode: textOf(fault.Code?.Subcode?.Value) || undefined,
    reason: textOf(reason),
  };
}
