import { validationError } from '../../../../common/errors';
import { canonicalToFlat, flatToCanonical, flatToStructured, structuredToFlat } from './flat';
import { compositionToXml } from './rm-xml';
import type { WebTemplate } from './web-template';

/**
 * The composition formats of openEHR REST for operational templates:
 * canonical JSON (the RM COMPOSITION), FLAT and STRUCTURED (web-template
 * based, as the openEHR SDK and EHRbase write them), and canonical XML (the
 * RM COMPOSITION as the openEHR XML schema writes it, a string). Chosen by the
 * `format` query parameter (XML by the REST media type); canonical when absent.
 */
const COMPOSITION_FORMATS = ['JSON', 'FLAT', 'STRUCTURED', 'XML'] as const;
export type CompositionFormat = (typeof COMPOSITION_FORMATS)[number];

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function compositionFormat(value: string | null | undefined): CompositionFormat {
  if (value === null || value === undefined || value === '') return 'JSON';
  const upper = value.toUpperCase();
  // EHRbase also names canonical JSON `CANONICAL`; `RAW` is its internal alias.
  if (upper === 'CANONICAL' || upper === 'RAW') return 'JSON';
  if ((COMPOSITION_FORMATS as readonly string[]).includes(upper)) return upper as CompositionFormat;
  throw validationError(`format must be one of ${COMPOSITION_FORMATS.join(', ')}`, [{ path: 'format', message: `unknown format '${value}'` }]);
}

/** A request body in the given format → the canonical COMPOSITION to store (its client-side uid dropped: the server assigns versions). */
export function toCanonical(body: unknown, format: CompositionFormat, wt: WebTemplate): Record<string, any> {
  let composition: unknown = body;
  if (format === 'FLAT') composition = flatToCanonical(body, wt);
  else if (format === 'STRUCTURED') composition = flatToCanonical(structuredToFlat(body, wt), wt);
  if (!isObject(composition) || composition._type !== 'COMPOSITION')
    throw validationError("A canonical composition is a JSON object with _type 'COMPOSITION'", [{ path: '_type', message: 'must be COMPOSITION' }]);
  const { uid: _uid, ...rest } = composition;
  return rest;
}

/** A stored canonical COMPOSITION, with its version uid, in the requested format. */
export function fromCanonical(content: Record<string, unknown>, versionUid: string, format: CompositionFormat, wt: WebTemplate): unknown {
  const { _type, name, uid: _uid, ...rest } = content;
  const composition = { _type, name, uid: { _type: 'OBJECT_VERSION_ID', value: versionUid }, ...rest };
  if (format === 'JSON') return withoutStaticTypes(composition);
  if (format === 'XML') return compositionToXml(composition);
  const flat = canonicalToFlat(composition, wt);
  return format === 'FLAT' ? flat : flatToStructured(flat);
}

/**
 * Canonical JSON as the openEHR REST API's published schema reads it: ARCHETYPED
 * has no subtypes, so `archetype_details` carries no `_type` (ITS-JSON requires
 * `_type` only where the value's type is not the attribute's own), and the
 * schema's ARCHETYPED admits no other property. Stored compositions keep what
 * was posted; answers drop it.
 */
export function withoutStaticTypes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutStaticTypes);
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (key === 'archetype_details' && isObject(child)) {
      const { _type: _archetyped, ...details } = child;
      out[key] = details;
    } else out[key] = withoutStaticTypes(child);
  }
  return out;
}
