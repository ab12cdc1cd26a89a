import type { ErrorDetail } from '../../../../common/errors';

/**
 * EVENT_CONTEXT.participations in FLAT, as EHRbase writes them:
 * `<root>/context/_participation:<i>|function`, `|name`, `|id`, `|id_scheme`,
 * `|id_namespace`. A participation is no web-template node, so flat.ts hands
 * these keys here. PARTICIPATION.mode (an openEHR-terminology code) is not
 * written or read yet.
 */

type Rm = Record<string, any>;
type Flat = Record<string, unknown>;

const SUFFIXES = new Set(['function', 'name', 'id', 'id_scheme', 'id_namespace']);

/** canonical → FLAT: the context's participations under `<prefix>/_participation:<i>`. */
export function emitParticipations(context: Rm, prefix: string, out: Flat) {
  const participations: Rm[] = Array.isArray(context.participations) ? context.participations : [];
  participations.forEach((p, i) => {
    const path = `${prefix}/_participation:${i}`;
    const put = (suffix: string, value: unknown) => {
      if (value !== undefined && value !== null) out[`${path}|${suffix}`] = value;
    };
    put('function', p.function?.value);
    put('name', p.performer?.name);
    put('id', p.performer?.external_ref?.id?.value);
    put('id_scheme', p.performer?.external_ref?.id?.scheme);
    put('id_namespace', p.performer?.external_ref?.namespace);
  });
}

/** FLAT → canonical: one `_participation:<i>` group's fields → a PARTICIPATION (performer PARTY_IDENTIFIED). */
export function readParticipation(fields: Map<string, unknown>, hasChildren: boolean, path: string, details: ErrorDetail[]): Rm | undefined {
  const unknown = [...fields.keys()].filter((s) => !SUFFIXES.has(s));
  if (hasChildren || unknown.length) {
    details.push({
      path,
      message: `a participation has |function, |name, |id, |id_scheme, |id_namespace${unknown.length ? ` (not |${unknown.join(', |')})` : ''}`,
    });
    return undefined;
  }
  const fn = fields.get('function');
  const name = fields.get('name');
  const id = fields.get('id');
  if (typeof fn !== 'string' || (name === undefined && id === undefined)) {
    details.push({ path, message: 'a participation needs |function and a performer (|name or |id)' });
    return undefined;
  }
  return {
    _type: 'PARTICIPATION',
    function: { _type: 'DV_TEXT', value: fn },
    performer: {
      _type: 'PARTY_IDENTIFIED',
      ...(name !== undefined ? { name } : {}),
      ...(id !== undefined
        ? {
            external_ref: {
              _type: 'PARTY_REF',
              id: { _type: 'GENERIC_ID', value: id, scheme: fields.get('id_scheme') ?? 'id' },
              namespace: fields.get('id_namespace') ?? 'local',
              type: 'PERSON',
            },
          }
        : {}),
    },
  };
}
