import { applyJsonPatch, parseJsonPatch } from './json-patch';

describe('JSON Patch (RFC 6902)', () => {
  const doc = { resourceType: 'Patient', name: [{ family: 'Smit', given: ['Eva'] }], gender: 'female' };
  const apply = (ops: unknown) => applyJsonPatch(doc, parseJsonPatch(ops));

  it('[XCH-014] applies add, remove, replace, move, copy and test in order, to a copy', () => {
    expect(
      apply([
        { op: 'test', path: '/gender', value: 'female' },
        { op: 'replace', path: '/name/0/family', value: 'Smit-de Boer' },
        { op: 'add', path: '/name/0/given/-', value: 'Maria' },
        { op: 'copy', from: '/gender', path: '/birthDate' },
        { op: 'replace', path: '/birthDate', value: '1990-02-03' },
        { op: 'add', path: '/telecom', value: [{ system: 'phone', value: '+31611112222' }] },
        { op: 'move', from: '/telecom', path: '/contact' },
        { op: 'remove', path: '/contact' },
        { op: 'add', path: '/name/0/given/0', value: 'A' },
      ]),
    ).toEqual({ resourceType: 'Patient', name: [{ family: 'Smit-de Boer', given: ['A', 'Eva', 'Maria'] }], gender: 'female', birthDate: '1990-02-03' });
    expect(doc.name[0].family).toBe('Smit');
    expect(apply([{ op: 'test', path: '/name', value: [{ given: ['Eva'], family: 'Smit' }] }])).toEqual(doc);
    expect(apply([{ op: 'add', path: '/a~1b', value: 1 }])).toMatchObject({ 'a/b': 1 });
  });

  it('[XCH-014] refuses malformed documents and operations that cannot apply', () => {
    for (const bad of [
      {},
      [{ op: 'frobnicate', path: '/gender' }],
      [{ op: 'add', path: 'gender', value: 'x' }],
      [{ op: 'add', path: '/gender' }],
      [{ op: 'move', path: '/gender' }],
      [{ op: 'remove', path: '/birthDate' }],
      [{ op: 'replace', path: '/address/0', value: {} }],
      [{ op: 'add', path: '/name/5', value: {} }],
      [{ op: 'test', path: '/gender', value: 'male' }],
      [{ op: 'move', from: '/name', path: '/name/0' }],
      [{ op: 'remove', path: '' }],
      [{ op: 'add', path: '/a~2', value: 1 }],
    ]) {
      expect(() => apply(bad)).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR' }));
    }
  });
});
