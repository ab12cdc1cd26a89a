import { XMLBuilder, XMLParser } from 'fast-xml-parser';

/**
 * The one way CareGraph reads and writes the XML of the standards it speaks (OPT, ebRIM/SOAP):
 * attributes as `@name`, namespace prefixes dropped, every value kept as the string it was (codes
 * such as `0001` must not turn into numbers), text of mixed elements as `#text`.
 */
export function xmlReader(arrays: ReadonlySet<string>): XMLParser {
  return new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@',
    removeNSPrefix: true,
    parseTagValue: false,
    parseAttributeValue: false,
    trimValues: true,
    textNodeName: '#text',
    isArray: (name) => arrays.has(name),
  });
}

/** Writes what xmlReader reads: `@name` attributes, `#text`, empty elements as `<x/>`, no indentation. */
export const xmlWriter = new XMLBuilder({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  textNodeName: '#text',
  suppressEmptyNode: true,
  suppressBooleanAttributes: false,
  format: false,
});
