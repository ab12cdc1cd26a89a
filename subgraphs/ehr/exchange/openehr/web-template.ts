import { findArchetype } from '../../clinical/archetypes';
import type { ConstraintNode } from '../../clinical/constraints';
import { rmClassOf } from '../content';

/**
 * A web template (the JSON form description openEHR tooling reads) generated
 * from a CareGraph template. `aqlPath` is the flat path CareGraph's AQL also answers
 * (`/content/blood_pressure/systolic`), not a canonical archetype path.
 */
interface WebNode {
  id: string;
  name: string;
  rmType: string;
  nodeId?: string;
  min: number;
  max: number;
  aqlPath: string;
  inputs?: Array<Record<string, unknown>>;
  children?: WebNode[];
}

const label = (id: string) => id.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());

function node(id: string, c: ConstraintNode, path: string, depth: number): WebNode {
  const base = { id, name: label(id), min: c.required ? 1 : 0, max: 1, aqlPath: path };
  switch (c.type) {
    case 'object':
      return { ...base, rmType: 'CLUSTER', children: Object.entries(c.children).map(([name, child]) => node(name, child, `${path}/${name}`, depth + 1)) };
    case 'archetype': {
      const archetype = findArchetype(c.archetypeId);
      const inner = archetype && depth < 24 ? node(id, archetype.definition, path, depth + 1) : undefined;
      return { ...base, rmType: rmClassOf(c.archetypeId) ?? 'CLUSTER', nodeId: c.archetypeId, children: inner?.children };
    }
    case 'list': {
      const item = node(id, c.items, `${path}[n]`, depth + 1);
      return { ...item, min: c.cardinality.min, max: c.cardinality.max ?? -1, aqlPath: path };
    }
    case 'quantity':
      return {
        ...base,
        rmType: 'DV_QUANTITY',
        inputs: [
          {
            suffix: 'magnitude',
            type: 'DECIMAL',
            ...(c.units.length === 1 && c.units[0].min !== undefined ? { validation: { range: { min: c.units[0].min, max: c.units[0].max } } } : {}),
          },
          {
            suffix: 'unit',
            type: 'CODED_TEXT',
            list: c.units.map((u) => ({
              value: u.unit,
              label: u.unit,
              ...(u.min !== undefined || u.max !== undefined ? { validation: { range: { min: u.min, max: u.max } } } : {}),
            })),
          },
        ],
      };
    case 'coded_text':
      return {
        ...base,
        rmType: 'DV_CODED_TEXT',
        inputs: [{ suffix: 'code', type: 'CODED_TEXT', terminology: c.terminology, list: c.valueSet.map((v) => ({ value: v.code, label: v.value })) }],
      };
    case 'text':
      return { ...base, rmType: 'DV_TEXT', inputs: [{ type: 'TEXT' }] };
    case 'date_time':
      return { ...base, rmType: 'DV_DATE_TIME', inputs: [{ type: 'DATETIME' }] };
    case 'date':
      return { ...base, rmType: 'DV_DATE', inputs: [{ type: 'DATE' }] };
    case 'boolean':
      return { ...base, rmType: 'DV_BOOLEAN', inputs: [{ type: 'BOOLEAN' }] };
    case 'count':
      return {
        ...base,
        rmType: 'DV_COUNT',
        inputs: [{ type: 'INTEGER', ...(c.min !== undefined || c.max !== undefined ? { validation: { range: { min: c.min, max: c.max } } } : {}) }],
      };
  }
}

export function webTemplate(template: { id: string; name: string; definition: ConstraintNode }) {
  const content = node('content', template.definition, '/content', 0);
  return {
    templateId: template.id,
    version: '2.3',
    defaultLanguage: 'en',
    languages: ['en'],
    tree: {
      id: template.id.replace(/\.v\d+$/, ''),
      name: template.name,
      rmType: 'COMPOSITION',
      nodeId: `caregraph:${template.id}`,
      min: 1,
      max: 1,
      aqlPath: '',
      children: [{ ...content, rmType: 'SECTION' }],
    },
  };
}
