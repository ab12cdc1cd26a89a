import { XMLParser } from 'fast-xml-parser';
import { parseUntrustedXml } from '../../../../common/xml';
import { validationError } from '../../../../common/errors';
import { RM_XML_SCHEMA } from './rm-xml-schema';

/**
 * Canonical openEHR XML (ITS-XML, RM Release 1.1.0) ⇄ canonical RM JSON for
 * compositions. Both walk the schema's own type table (rm-xml-schema.ts,
 * generated from the published XSD): elements in schema order, LOCATABLE's
 * `archetype_node_id` as an XML attribute, `xsi:type` where the value's RM
 * type is not the element's declared one, JSON's `_type` on every object.
 */

export type Primitive = 'string' | 'number' | 'boolean';
export interface RmXmlType {
  base?: string;
  abstract?: boolean;
  attributes: string[];
  /** [element name, type, repeats]. */
  elements: Array<[string, string, boolean]>;
  /** simpleContent: the value is the element's text. */
  text?: boolean;
}
export interface RmXmlSchema {
  types: Record<string, RmXmlType>;
  simple: Record<string, Primitive>;
}

const NAMESPACE = 'http://schemas.openehr.org/v2';
const XSI = 'http://www.w3.org/2001/XMLSchema-instance';
const MAX_DEPTH = 64;

interface Flat {
  abstract: boolean;
  attributes: string[];
  elements: Map<string, { type: string; many: boolean }>;
  text: boolean;
}

const flattened = new Map<string, Flat>();
/** A type with its base types' attributes and elements, base first (the schema's order). */
export function typeOf(name: string): Flat | undefined {
  let flat = flattened.get(name);
  if (flat) return flat;
  const own = RM_XML_SCHEMA.types[name];
  if (!own) return undefined;
  const base = own.base ? typeOf(own.base) : undefined;
  flat = {
    abstract: !!own.abstract,
    attributes: [...(base?.attributes ?? []), ...own.attributes],
    elements: new Map([...(base?.elements ?? []), ...own.elements.map(([n, type, many]) => [n, { type, many }] as const)]),
    text: !!own.text || !!base?.text,
  };
  flattened.set(name, flat);
  return flat;
}

/** The XML Schema built-in types that are not JSON strings. */
export const XS_PRIMITIVES: Record<string, Primitive> = {
  'xs:boolean': 'boolean',
  'xs:double': 'number',
  'xs:float': 'number',
  'xs:decimal': 'number',
  'xs:int': 'number',
  'xs:integer': 'number',
  'xs:long': 'number',
  'xs:nonNegativeInteger': 'number',
  'xs:positiveInteger': 'number',
};

export function primitiveOf(type: string): Primitive | undefined {
  if (RM_XML_SCHEMA.types[type]) return undefined;
  return XS_PRIMITIVES[type] ?? RM_XML_SCHEMA.simple[type] ?? 'string';
}

const escape = (value: string) => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

// ---- JSON → XML -----------------------------------------------------------

/** A canonical COMPOSITION as canonical XML (`<composition xmlns="http://schemas.openehr.org/v2">`). */
export function compositionToXml(composition: Record<string, unknown>): string {
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>'];
  writeElement(out, 'composition', 'COMPOSITION', composition, '', true);
  return out.join('');
}

function writeElement(out: string[], element: string, declared: string, value: unknown, path: string, root = false) {
  const primitive = primitiveOf(declared);
  if (primitive) {
    if (isObject(value) || Array.isArray(value)) throw cannot(path, `a ${primitive} is expected`);
    out.push(`<${element}>${escape(String(value))}</${element}>`);
    return;
  }
  if (!isObject(value)) throw cannot(path, `an object of type ${declared} is expected`);
  const actual = typeof value._type === 'string' ? value._type : declared;
  const type = typeOf(actual);
  if (!type) throw cannot(path, `unknown RM type ${actual}`);
  if (type.abstract) throw cannot(path, `${actual} is abstract: give _type`);
  let open = `<${element}`;
  if (root) open += ` xmlns="${NAMESPACE}" xmlns:xsi="${XSI}"`;
  if (actual !== declared) open += ` xsi:type="${actual}"`;
  for (const attribute of type.attributes)
    if (value[attribute] !== undefined && value[attribute] !== null) open += ` ${attribute}="${escape(String(value[attribute]))}"`;
  const unknown = Object.keys(value).filter((k) => k !== '_type' && !type.attributes.includes(k) && !type.elements.has(k));
  if (unknown.length) throw cannot(`${path}/${unknown[0]}`, `${actual} has no attribute ${unknown[0]}`);
  out.push(`${open}>`);
  for (const [name, { type: childType, many }] of type.elements) {
    const child = value[name];
    if (child === undefined || child === null) continue;
    if (many) {
      if (!Array.isArray(child)) throw cannot(`${path}/${name}`, 'a list is expected');
      child.forEach((item, i) => writeElement(out, name, childType, item, `${path}/${name}[${i}]`));
    } else writeElement(out, name, childType, child, `${path}/${name}`);
  }
  out.push(`</${element}>`);
}

function cannot(path: string, message: string) {
  return validationError(`The composition cannot be written as canonical XML at ${path || '/'}: ${message}`, [{ path: path || '/', message }]);
}

// ---- XML → JSON -----------------------------------------------------------

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  removeNSPrefix: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  preserveOrder: true,
  processEntities: true,
});

type Node = Record<string, any>;
const tagOf = (node: Node) => Object.keys(node).find((k) => k !== ':@')!;

/** Canonical XML of a COMPOSITION → its canonical JSON; 400 naming the element for anything the RM schema does not have. */
export function compositionFromXml(xml: string): Record<string, unknown> {
  const roots = (parseUntrustedXml(parser, xml, (reason) => invalid('/', reason)) as Node[]).filter((n) => tagOf(n) !== '?xml' && tagOf(n) !== '#text');
  if (roots.length !== 1 || tagOf(roots[0]) !== 'composition')
    throw invalid('/', 'the root element must be <composition> (namespace http://schemas.openehr.org/v2)');
  return readElement(roots[0], 'COMPOSITION', '/composition', 0) as Record<string, unknown>;
}

function readElement(node: Node, declared: string, path: string, depth: number): unknown {
  if (depth > MAX_DEPTH) throw invalid(path, `nests deeper than ${MAX_DEPTH} levels`);
  const tag = tagOf(node);
  const content = node[tag] as Node[];
  const attributes: Record<string, string> = node[':@'] ?? {};
  const primitive = primitiveOf(declared);
  if (primitive) {
    const text = content.map((c) => c['#text'] ?? '').join('');
    if (content.some((c) => tagOf(c) !== '#text')) throw invalid(path, 'text expected, not elements');
    if (primitive === 'number') {
      const number = Number(text.trim());
      if (!text.trim() || !Number.isFinite(number)) throw invalid(path, `'${text}' is not a number`);
      return number;
    }
    if (primitive === 'boolean') {
      if (!['true', 'false', '1', '0'].includes(text.trim())) throw invalid(path, `'${text}' is not a boolean`);
      return text.trim() === 'true' || text.trim() === '1';
    }
    return text;
  }
  const actual = attributes.type ?? declared;
  const type = typeOf(actual);
  if (!type) throw invalid(path, `unknown RM type ${actual}`);
  if (type.abstract) throw invalid(path, `${actual} is abstract: give xsi:type`);
  const value: Record<string, unknown> = { _type: actual };
  for (const [name, text] of Object.entries(attributes)) {
    if (name === 'type' || name === 'xmlns' || name.startsWith('xmlns:')) continue;
    if (!type.attributes.includes(name)) throw invalid(path, `${actual} has no attribute ${name}`);
    value[name] = text;
  }
  for (const child of content) {
    const name = tagOf(child);
    if (name === '#text') {
      if (String(child['#text']).trim()) throw invalid(path, 'elements expected, not text');
      continue;
    }
    if (name === '#comment') continue;
    const spec = type.elements.get(name);
    if (!spec) throw invalid(`${path}/${name}`, `${actual} has no element ${name}`);
    const read = readElement(child, spec.type, `${path}/${name}`, depth + 1);
    if (spec.many) ((value[name] ??= []) as unknown[]).push(read);
    else if (name in value) throw invalid(`${path}/${name}`, 'given twice');
    else value[name] = read;
  }
  return value;
}

function invalid(path: string, message: string) {
  return validationError(`Invalid canonical XML composition at ${path}: ${message}`, [{ path, message }]);
}
