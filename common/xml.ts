import { XMLBuilder, XMLParser, XMLValidator } from 'fast-xml-parser';

/**
 * The one way CareGraph reads and writes the XML of the standards it speaks (OPT, ebRIM/SOAP):
 * attributes as `@name`, namespace prefixes dropped, every value kept as the string it was (codes
 * such as `0001` must not turn into numbers), text of mixed elements as `#text`.
 */
/** `rawTags`: paths (`..term_definitions.items`) whose text is kept exactly as written, entities still encoded. */
export function xmlReader(arrays: ReadonlySet<string>, rawTags: string[] = []): XMLParser {
  return new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@',
    removeNSPrefix: true,
    parseTagValue: false,
    parseAttributeValue: false,
    trimValues: true,
    textNodeName: '#text',
    isArray: (name) => arrays.has(name),
    stopNodes: rawTags,
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

/**
 * The deepest element nesting CareGraph reads: far above its formats' documents
 * (the deepest OPT seen is about 30 levels), and at the nesting limit of
 * fast-xml-parser itself, so a deeper document is refused with a reason here
 * instead of failing inside the parser or a recursive reader after it.
 */
const MAX_XML_DEPTH = 100;

/**
 * Why XML a client sent must not reach a parser, or undefined when it may. None
 * of the formats read (SOAP 1.2, ebRIM, OPT 1.4, canonical RM XML) uses a DTD,
 * and SOAP forbids one, so any markup declaration (`<!DOCTYPE`, `<!ENTITY`, …)
 * is refused outright: without one there are no external or parameter entities
 * to fetch and no internal entities to expand, only the five predefined ones.
 * One linear pass over the text, so 100,000 nested elements cost no stack.
 */
function unsafeXml(xml: string): string | undefined {
  let depth = 0;
  let at = xml.indexOf('<');
  while (at >= 0) {
    let end: number;
    if (xml.startsWith('<!--', at)) end = xml.indexOf('-->', at + 4) + 3;
    else if (xml.startsWith('<![CDATA[', at)) end = xml.indexOf(']]>', at + 9) + 3;
    else if (xml.startsWith('<?', at)) end = xml.indexOf('?>', at + 2) + 2;
    else if (xml.startsWith('<!', at))
      return 'refused: it holds a markup declaration (<!DOCTYPE>, <!ENTITY>), and DTDs and entity declarations are not accepted';
    else if (xml.startsWith('</', at)) {
      depth--;
      end = xml.indexOf('>', at) + 1;
    } else {
      // A start tag ends at the first '>' outside a quoted attribute value.
      let quote = '';
      end = at + 1;
      for (; end < xml.length; end++) {
        const c = xml[end];
        if (quote) {
          if (c === quote) quote = '';
        } else if (c === '"' || c === "'") quote = c;
        else if (c === '>') break;
      }
      if (end >= xml.length) return undefined;
      if (xml[end - 1] !== '/' && ++depth > MAX_XML_DEPTH) return `refused: its elements nest deeper than ${MAX_XML_DEPTH} levels`;
      end++;
    }
    // An unterminated comment, CDATA section or tag: the well-formedness check names it.
    if (end <= at) return undefined;
    at = xml.indexOf('<', end);
  }
  return undefined;
}

/**
 * The one way XML from outside is parsed: refused before parsing when it
 * declares a DTD or entities or nests too deep, then checked for
 * well-formedness, then parsed. Every refusal, the parser's own included, is
 * bad input: `refuse` turns the reason into the caller's protocol error (a
 * SOAP Sender fault, a 400 VALIDATION_ERROR, an ebXML registry error).
 */
export function parseUntrustedXml(parser: XMLParser, xml: string, refuse: (reason: string) => Error): unknown {
  const unsafe = unsafeXml(xml);
  if (unsafe) throw refuse(unsafe);
  const checked = XMLValidator.validate(xml);
  if (checked !== true) throw refuse(`not well-formed XML: ${checked.err.msg} (line ${checked.err.line})`);
  try {
    return parser.parse(xml);
  } catch (err) {
    throw refuse(`refused by the XML parser: ${(err as Error).message}`);
  }
}
