import { deriveRmXmlSchema } from '../../../../scripts/rm-xml-schema';
import { PUBLISHED_XSD, compositionSchemaErrors as schemaErrors } from '../../../../test/support/openehr-xsd';
import { THIRD_PARTY, fixtureJson } from './fixtures';
import { compositionFromXml, compositionToXml } from './rm-xml';
import { RM_XML_SCHEMA } from './rm-xml-schema';

describe('canonical XML compositions', () => {
  it('walks the type table of the published RM schema (regenerate with node dist/scripts/rm-xml-schema.js)', () => {
    expect(RM_XML_SCHEMA).toEqual(deriveRmXmlSchema(PUBLISHED_XSD));
  });

  describe.each(THIRD_PARTY)('$canonical', (t) => {
    const canonical = fixtureJson(t.canonical);

    it('writes XML the published schema validates, in its element order with xsi:type', () => {
      const xml = compositionToXml(canonical);
      expect(schemaErrors(xml)).toBe('');
      expect(xml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?><composition xmlns="http:\/\/schemas.openehr.org\/v2"/);
      expect(xml).toContain('<composer xsi:type="PARTY_IDENTIFIED">');
      expect(xml.indexOf('<language>')).toBeLessThan(xml.indexOf('<territory>'));
      expect(xml.indexOf('<territory>')).toBeLessThan(xml.indexOf('<category>'));
    });

    it('reads the XML back into the same canonical JSON', () => {
      expect(compositionFromXml(compositionToXml(canonical))).toEqual(canonical);
    });
  });

  it('catches what the schema rejects (the check can fail) and refuses XML outside the RM with 400', () => {
    const canonical = fixtureJson(THIRD_PARTY[0].canonical);
    const xml = compositionToXml(canonical);
    expect(schemaErrors(xml.replace(/<territory>.*?<\/territory>/, ''))).toMatch(/territory|category/);
    for (const bad of [
      xml.replace('<language>', '<colour>x</colour><language>'),
      xml.replace('<composition ', '<folder ').replace('</composition>', '</folder>'),
      '<composition xmlns="http://schemas.openehr.org/v2"',
      '<!DOCTYPE composition [<!ENTITY x "y">]><composition/>',
      xml.replace(/<magnitude>[^<]*<\/magnitude>/, '<magnitude>heavy</magnitude>'),
    ]) {
      expect(() => compositionFromXml(bad)).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR' }));
    }
    expect(() => compositionToXml({ ...canonical, colour: 'red' })).toThrow(/no attribute colour/);
  });
});
