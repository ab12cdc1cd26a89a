import { canonicalRm } from './rm-shape';

const element = (value: unknown) => ({ _type: 'ELEMENT', archetype_node_id: 'at0002', name: { value: 'Insurer' }, value });

describe('canonicalRm (by the published RM schema)', () => {
  it('types what the schema implies and keeps what was written', () => {
    const { value, errors } = canonicalRm(
      { _type: 'ITEM_LIST', archetype_node_id: 'at0001', name: { value: 'List' }, items: [element({ _type: 'DV_TEXT', value: 'AOK' })] },
      'ITEM_STRUCTURE',
    );
    expect(errors).toEqual([]);
    expect(value).toEqual({
      _type: 'ITEM_LIST',
      archetype_node_id: 'at0001',
      name: { _type: 'DV_TEXT', value: 'List' },
      items: [{ _type: 'ELEMENT', archetype_node_id: 'at0002', name: { _type: 'DV_TEXT', value: 'Insurer' }, value: { _type: 'DV_TEXT', value: 'AOK' } }],
    });
  });

  it('types an untyped OBJECT_ID by its value, as subject ids are written', () => {
    const ref = (value: string) => canonicalRm({ id: { value }, namespace: 'x', type: 'PERSON' }, 'PARTY_REF').value as { id: { _type: string } };
    expect(ref('0b5a2c4e-0003-4a11-8a11-000000000003').id._type).toBe('HIER_OBJECT_ID');
    expect(ref('ins-4711').id._type).toBe('GENERIC_ID');
  });

  it.each([
    ['an abstract type', { _type: 'ITEM_STRUCTURE' }, '', 'ITEM_STRUCTURE is abstract: give _type'],
    ['a type that is not the declared one', { _type: 'DV_TEXT', value: 'x' }, '/_type', 'DV_TEXT is not a ITEM_STRUCTURE'],
    ['an unknown type', { _type: 'ITEM_BAG' }, '/_type', 'unknown RM type ITEM_BAG'],
    [
      'an attribute the type lacks',
      { _type: 'ITEM_LIST', archetype_node_id: 'at1', name: { value: 'x' }, rows: [] },
      '/rows',
      'ITEM_LIST has no attribute rows',
    ],
    [
      'a single value where a list repeats',
      { _type: 'ITEM_LIST', archetype_node_id: 'at1', name: { value: 'x' }, items: element(null) },
      '/items',
      'an array is expected',
    ],
    ['a LOCATABLE without a name', { _type: 'ITEM_LIST', archetype_node_id: 'at1' }, '/name', 'required'],
    ['a primitive of the wrong type', { _type: 'ITEM_SINGLE', archetype_node_id: 'at1', name: { value: 1 } }, '/name/value', 'a string is expected'],
  ])('refuses %s, naming the path', (_, value, path, message) => {
    expect(canonicalRm(value, 'ITEM_STRUCTURE').errors).toContainEqual({ path, message });
  });
});
