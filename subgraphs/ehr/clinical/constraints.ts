import { z } from 'zod';

/**
 * The constraint model of archetypes and templates (a compact take on openEHR
 * AOM): every node constrains one value of a composition's content. Node
 * `required` is openEHR occurrences 1..1 (default 0..1); `list` carries a
 * cardinality; `archetype` fills a slot with a reusable archetype.
 */
export type ConstraintNode =
  | { type: 'object'; required?: boolean; children: Record<string, ConstraintNode> }
  | { type: 'quantity'; required?: boolean; units: QuantityUnit[] }
  | { type: 'coded_text'; required?: boolean; terminology: string; valueSet: Array<{ code: string; value: string }> }
  | { type: 'text'; required?: boolean; minLength?: number; maxLength?: number }
  | { type: 'date_time'; required?: boolean }
  | { type: 'date'; required?: boolean }
  | { type: 'boolean'; required?: boolean }
  | { type: 'count'; required?: boolean; min?: number; max?: number }
  | { type: 'list'; required?: boolean; cardinality: { min: number; max?: number }; items: ConstraintNode }
  | { type: 'archetype'; required?: boolean; archetypeId: string };

interface QuantityUnit {
  unit: string;
  min?: number;
  max?: number;
}

const NAME = /^[a-z][a-z0-9_]{0,63}$/;
/** Deepest template definition, in constraint levels (docs/security.md). */
const MAX_DEPTH = 12;

const required = z.boolean().optional();
const bounds = <T extends { min?: number; max?: number }>(value: T) => value.min === undefined || value.max === undefined || value.min <= value.max;

export const constraintNodeSchema: z.ZodType<ConstraintNode> = z.lazy(() =>
  z.discriminatedUnion('type', [
    z.strictObject({
      type: z.literal('object'),
      required,
      children: z
        .record(z.string().regex(NAME, 'element names are lower-case letters, digits and _'), constraintNodeSchema)
        .refine((c) => Object.keys(c).length > 0, 'needs at least one element'),
    }),
    z.strictObject({
      type: z.literal('quantity'),
      required,
      units: z
        .array(
          z.strictObject({ unit: z.string().min(1).max(32), min: z.number().optional(), max: z.number().optional() }).refine(bounds, 'min must not exceed max'),
        )
        .min(1, 'a quantity allows at least one unit'),
    }),
    z.strictObject({
      type: z.literal('coded_text'),
      required,
      terminology: z.string().min(1).max(64),
      valueSet: z.array(z.strictObject({ code: z.string().min(1).max(64), value: z.string().min(1).max(256) })).min(1, 'a value set has at least one code'),
    }),
    z
      .strictObject({
        type: z.literal('text'),
        required,
        minLength: z.number().int().min(0).optional(),
        maxLength: z.number().int().min(1).max(1_000_000).optional(),
      })
      .refine((t) => t.minLength === undefined || t.maxLength === undefined || t.minLength <= t.maxLength, 'minLength must not exceed maxLength'),
    z.strictObject({ type: z.literal('date_time'), required }),
    z.strictObject({ type: z.literal('date'), required }),
    z.strictObject({ type: z.literal('boolean'), required }),
    z
      .strictObject({ type: z.literal('count'), required, min: z.number().int().optional(), max: z.number().int().optional() })
      .refine(bounds, 'min must not exceed max'),
    z.strictObject({
      type: z.literal('list'),
      required,
      cardinality: z.strictObject({ min: z.number().int().min(0), max: z.number().int().min(1).optional() }).refine(bounds, 'min must not exceed max'),
      items: constraintNodeSchema,
    }),
    z.strictObject({ type: z.literal('archetype'), required, archetypeId: z.string().min(1).max(128) }),
  ]),
);

/**
 * Whether an unchecked definition nests more than `max` constraint levels
 * (archetype slots count as one level). Runs before the schema, which
 * recurses per level: it follows only the positions that nest (object
 * `children`, list `items`) and keeps its own stack, so a definition
 * thousands of levels deep is measured, not recursed into.
 */
export function definitionNestsDeeperThan(definition: unknown, max: number): boolean {
  const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
  const pending: Array<[unknown, number]> = [[definition, 1]];
  while (pending.length > 0) {
    const [node, depth] = pending.pop()!;
    if (!isRecord(node)) continue;
    if (depth > max) return true;
    if (isRecord(node.children)) for (const child of Object.values(node.children)) pending.push([child, depth + 1]);
    if (node.items !== undefined) pending.push([node.items, depth + 1]);
  }
  return false;
}

export { MAX_DEPTH };
