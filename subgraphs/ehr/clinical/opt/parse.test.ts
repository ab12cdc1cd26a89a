import { parseOpt } from './parse';
import { buildWebTemplate } from './web-template';
import { validateComposition } from './validate';
import { flatToCanonical } from './flat';

/** A minimal OPT with one ordinal element, in the XML shape the Template Designer writes. */
const OPT = `<?xml version="1.0" encoding="utf-8"?>
<template xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns="http://schemas.openehr.org/v1">
  <language><terminology_id><value>ISO_639-1</value></terminology_id><code_string>en</code_string></language>
  <template_id><value>ordinal.v1</value></template_id>
  <concept>ordinal.v1</concept>
  <definition>
    <rm_type_name>COMPOSITION</rm_type_name>
    <occurrences><lower>1</lower><upper>1</upper></occurrences>
    <node_id>at0000</node_id>
    <attributes xsi:type="C_MULTIPLE_ATTRIBUTE">
      <rm_attribute_name>content</rm_attribute_name>
      <existence><lower>0</lower><upper>1</upper></existence>
      <children xsi:type="C_ARCHETYPE_ROOT">
        <rm_type_name>EVALUATION</rm_type_name>
        <occurrences><lower>1</lower><upper>1</upper></occurrences>
        <node_id/>
        <attributes xsi:type="C_SINGLE_ATTRIBUTE">
          <rm_attribute_name>data</rm_attribute_name>
          <existence><lower>1</lower><upper>1</upper></existence>
          <children xsi:type="C_COMPLEX_OBJECT">
            <rm_type_name>ITEM_TREE</rm_type_name>
            <occurrences><lower>1</lower><upper>1</upper></occurrences>
            <node_id>at0001</node_id>
            <attributes xsi:type="C_MULTIPLE_ATTRIBUTE">
              <rm_attribute_name>items</rm_attribute_name>
              <existence><lower>1</lower><upper>1</upper></existence>
              <children xsi:type="C_COMPLEX_OBJECT">
                <rm_type_name>ELEMENT</rm_type_name>
                <occurrences><lower>1</lower><upper>1</upper></occurrences>
                <node_id>at0002</node_id>
                <attributes xsi:type="C_SINGLE_ATTRIBUTE">
                  <rm_attribute_name>value</rm_attribute_name>
                  <existence><lower>1</lower><upper>1</upper></existence>
                  <children xsi:type="C_DV_ORDINAL">
                    <rm_type_name>DV_ORDINAL</rm_type_name>
                    <occurrences><lower>1</lower><upper>1</upper></occurrences>
                    <node_id/>
                    <list><value>0</value><symbol><value/><defining_code><terminology_id><value>local</value></terminology_id><code_string>at0003</code_string></defining_code></symbol></list>
                    <list><value>2</value><symbol><value/><defining_code><terminology_id><value>local</value></terminology_id><code_string>at0004</code_string></defining_code></symbol></list>
                  </children>
                </attributes>
              </children>
            </attributes>
          </children>
        </attributes>
        <archetype_id><value>openEHR-EHR-EVALUATION.pain.v1</value></archetype_id>
        <term_definitions code="at0000"><items id="text">Pain</items></term_definitions>
        <term_definitions code="at0002"><items id="text">Severity</items></term_definitions>
        <term_definitions code="at0003"><items id="text">None</items></term_definitions>
        <term_definitions code="at0004"><items id="text">Severe</items></term_definitions>
      </children>
    </attributes>
    <archetype_id><value>openEHR-EHR-COMPOSITION.report.v1</value></archetype_id>
    <term_definitions code="at0000"><items id="text">Report</items></term_definitions>
  </definition>
</template>`;

describe('OPT parsing', () => {
  const wt = buildWebTemplate(parseOpt(OPT));
  const severity = wt.tree.children!.find((c) => c.id === 'pain')!.children!.find((c) => c.id === 'severity')!;

  it('reads DV_ORDINAL lists with their symbols and term texts', () => {
    expect(severity).toMatchObject({
      rmType: 'DV_ORDINAL',
      nodeId: 'at0002',
      aqlPath: '/content[openEHR-EHR-EVALUATION.pain.v1]/data[at0001]/items[at0002]/value',
    });
    expect(severity.inputs![0].list).toEqual([
      // A term without a description: an empty one, as EHRbase writes it.
      { value: 'at0003', label: 'None', ordinal: 0, localizedLabels: { en: 'None' }, localizedDescriptions: { en: '' } },
      { value: 'at0004', label: 'Severe', ordinal: 2, localizedLabels: { en: 'Severe' }, localizedDescriptions: { en: '' } },
    ]);
  });

  it('validates ordinals against the list', () => {
    const flat = (code: string, ordinal: number) => ({
      'report/language|code': 'en',
      'report/language|terminology': 'ISO_639-1',
      'report/territory|code': 'NL',
      'report/territory|terminology': 'ISO_3166-1',
      'report/composer|name': 'Dr. Jones',
      'report/category|code': '433',
      'report/category|terminology': 'openehr',
      'report/context/start_time': '2026-11-22T09:00:00Z',
      'report/context/setting|code': '238',
      'report/context/setting|value': 'other care',
      'report/context/setting|terminology': 'openehr',
      'report/pain/severity|code': code,
      'report/pain/severity|ordinal': ordinal,
    });
    expect(validateComposition(flatToCanonical(flat('at0004', 2), wt), wt)).toEqual([]);
    expect(validateComposition(flatToCanonical(flat('at0004', 1), wt), wt)).toEqual([
      expect.objectContaining({ webTemplatePath: 'report/pain/severity', message: "ordinal 1 with symbol 'at0004' is not in the template's list" }),
    ]);
  });

  it('refuses a document that is not an OPT', () => {
    expect(() => parseOpt('<template/>')).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR' }));
    expect(() => parseOpt('<template><x>')).toThrow(/not well-formed XML/);
  });
});
