import { Prisma } from '../db/generated/client';
import type { TenantTx } from '../db/tenant';
import { documentType, rmAt } from '../exchange/content';

/**
 * The clinical index (docs/security.md "Clinical index"): the structured leaf
 * values of a canonical RM COMPOSITION as rows, so FHIR search and AQL can
 * select compositions in SQL and decrypt only those they return. Free text
 * (DV_TEXT), names, identifiers' values and the parties (composer, subject,
 * participations) are never indexed; one fixed path tells which coded leaf is
 * a clinical note's document type (DOCUMENT_TYPE_PATH).
 */

/** What the index says of the composition a row belongs to. */
export interface IndexedComposition {
  compositionId: string;
  ehrId: string;
  patientId: string;
  templateId: string;
  area: string;
  /** The commit time: the clinical time of entries without one. */
  committedAt: Date;
}

/** A leaf of a top-level entry: its path below the entry and, optionally, conditions on its values. */
export interface EntryLeaf {
  path: string;
  /** A leaf of the entry's composition (its context), not of the entry: `path` is from the composition's root. */
  ofComposition?: boolean;
  where?: Prisma.ClinicalIndexEntryWhereInput;
}

/**
 * Where a clinical note's document type (docs/exchange.md) is indexed: at the AQL path of the context element
 * named "Document type", name included, since the title shares its node id (and may be coded text too).
 */
export const DOCUMENT_TYPE_PATH = "/context/other_context[at0001]/items[at0007,'Document type']/value";

/** A leaf an entry has (with a value meeting its `where`), or with `absent` lacks. */
export interface LeafTest {
  leaf: EntryLeaf;
  absent?: boolean;
}

/** One kind of top-level entry, as the clinical index selects it (CompositionService.indexedEntries). */
export interface EntryCondition {
  archetypeId: string;
  /** Leaves the entry must have (each with a value meeting its `where`). */
  requires?: EntryLeaf[];
  /** Leaves it must not have. */
  excludes?: EntryLeaf[];
  /** Choices: of each, the entry meets at least one test (e.g. it lacks a leaf or has a second cluster). */
  anyOf?: LeafTest[][];
}

/** An order of indexed entries: by clinical time, commit time, or id (composition, then entry archetype). */
export interface EntryOrder {
  key: 'effectiveAt' | 'committedAt' | 'id';
  descending: boolean;
}

/** A leaf a composition must have: below an archetype (at any depth), at a path relative to it, with a value. */
export interface LeafCondition {
  archetypeId: string;
  path: string;
  magnitude?: { op: '=' | '<' | '>' | '<=' | '>='; value: number };
  code?: string;
}

/** The condition that selects the compositions a caller may query (CompositionService.queryCandidates). */
export interface Candidates {
  /** On `c` ("ehr"."Composition"). */
  compositions: Prisma.Sql;
  /** The same on an index row (its alias): undefined where the rows cannot tell it. */
  indexRows?: (alias: string) => Prisma.Sql;
  /**
   * The same as kept counts of values can apply it (ClinicalValueCount): `on` their rows (alias; tenant, data areas,
   * templates), less the values of the index rows (alias) `excluded` picks (restricted patients, non-queryable EHRs),
   * none when it picks nothing. Undefined where the scope is not of that form (one patient, creation-time bounds).
   */
  counts?: { on: (alias: string) => Prisma.Sql; excluded?: (alias: string) => Prisma.Sql };
}

/** A LeafCondition as a filter on index rows. */
export function leafWhere(c: LeafCondition): Prisma.ClinicalIndexEntryWhereInput {
  const ops = { '=': 'equals', '<': 'lt', '>': 'gt', '<=': 'lte', '>=': 'gte' } as const;
  return {
    archetypeId: c.archetypeId,
    path: { endsWith: `[${c.archetypeId}]${c.path}` },
    ...(c.magnitude ? { magnitude: { [ops[c.magnitude.op]]: c.magnitude.value } } : {}),
    ...(c.code !== undefined ? { code: c.code } : {}),
  };
}

/** The same filter as leafWhere, as SQL on the composition `c` (for statements the service writes itself). */
export function leafSql(c: LeafCondition): Prisma.Sql {
  const suffix = `[${c.archetypeId}]${c.path}`;
  const ops = { '=': '=', '<': '<', '>': '>', '<=': '<=', '>=': '>=' } as const;
  return Prisma.sql`EXISTS (SELECT 1 FROM "ehr"."ClinicalIndexEntry" i WHERE i."tenantId" = c."tenantId" AND i."compositionId" = c."id"
    AND i."archetypeId" = ${c.archetypeId} AND right(i."path", ${suffix.length}::int) = ${suffix}
    ${c.magnitude ? Prisma.sql`AND i."magnitude" ${Prisma.raw(ops[c.magnitude.op])} ${c.magnitude.value}::float8` : Prisma.empty}
    ${c.code !== undefined ? Prisma.sql`AND i."code" = ${c.code}` : Prisma.empty})`;
}

export type IndexRow = Omit<Prisma.ClinicalIndexEntryCreateManyInput, 'tenantId'>;

type Json = Record<string, any>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Attributes never indexed: parties (they may name people), free-text names, links and provenance. */
const SKIPPED = new Set([
  'name',
  'uid',
  'composer',
  'subject',
  'provider',
  'other_participations',
  'participations',
  'health_care_facility',
  'feeder_audit',
  'archetype_details',
  'links',
  'workflow_id',
  'guideline_id',
  'wf_definition',
]);

/** RM classes that are content entries (what a FHIR resource or an AQL `CONTAINS OBSERVATION o` names). */
const ENTRY = /^(OBSERVATION|EVALUATION|INSTRUCTION|ACTION|ADMIN_ENTRY|GENERIC_ENTRY|SECTION)$/;

function parseTime(value: unknown): Date | undefined {
  if (typeof value !== 'string') return undefined;
  const t = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value);
  return Number.isNaN(t) ? undefined : new Date(t);
}

/** The indexed fields of one data value, or null when it is not an indexed type (DV_TEXT and the like). */
function leaf(value: Json): Partial<IndexRow> | null {
  switch (value._type) {
    case 'DV_QUANTITY':
      return typeof value.magnitude === 'number' ? { magnitude: value.magnitude, unit: value.units ?? null } : null;
    case 'DV_COUNT':
      return typeof value.magnitude === 'number' ? { magnitude: value.magnitude } : null;
    case 'DV_PROPORTION':
      return typeof value.numerator === 'number' ? { magnitude: value.numerator } : null;
    case 'DV_CODED_TEXT':
      return value.defining_code?.code_string
        ? { code: String(value.defining_code.code_string), terminology: value.defining_code.terminology_id?.value ?? null }
        : null;
    case 'DV_ORDINAL':
      return {
        magnitude: typeof value.value === 'number' ? value.value : null,
        code: value.symbol?.defining_code?.code_string ?? null,
        terminology: value.symbol?.defining_code?.terminology_id?.value ?? null,
      };
    case 'DV_BOOLEAN':
      return typeof value.value === 'boolean' ? { boolean: value.value } : null;
    case 'DV_DATE_TIME':
    case 'DV_DATE': {
      const at = parseTime(value.value);
      return at ? { dateTime: at } : null;
    }
    case 'DV_IDENTIFIER':
      // The type only: an identifier's value may identify a person.
      return typeof value.type === 'string' ? { code: value.type } : null;
    default:
      return null;
  }
}

/**
 * The index rows of one composition version's content: row 0 is the
 * composition itself (present for every indexed composition, whatever its
 * content, so the backfill can tell indexed compositions apart), then one row
 * per top-level entry and one per indexed leaf (a clinical note's document
 * type twice: also at DOCUMENT_TYPE_PATH). Content that is not a
 * canonical COMPOSITION (CareGraph JSON templates) gets row 0 only. An
 * archetyped CLUSTER in an entry gets a row too (no value; its ordinal at its
 * path), so a query can count them.
 */
export function indexRows(composition: IndexedComposition, content: unknown): IndexRow[] {
  const canonical = isObject(content) && content._type === 'COMPOSITION';
  const startTime = canonical ? parseTime(rmAt(content, '/context/start_time')?.value) : undefined;
  const base = {
    compositionId: composition.compositionId,
    ehrId: composition.ehrId,
    patientId: composition.patientId,
    templateId: composition.templateId,
    area: composition.area,
    committedAt: composition.committedAt,
  };
  // The row of a numeric value, and of an entry's code, also carries the composition's start time: an AQL
  // population query's time window is tested on the row it counts (docs/exchange.md "Evaluation and its limits").
  const value = (fields: Partial<IndexRow>, inEntry: boolean) => ({
    ...fields,
    startTime: typeof fields.magnitude === 'number' || (inEntry && typeof fields.code === 'string') ? (startTime ?? null) : null,
  });
  const rootArchetype = canonical && typeof content.archetype_node_id === 'string' ? content.archetype_node_id : composition.templateId;
  const rows: IndexRow[] = [
    { ...base, seq: 0, effectiveAt: startTime ?? composition.committedAt, archetypeId: rootArchetype, path: '/', positions: [], rmType: 'COMPOSITION' },
  ];
  if (!canonical) return rows;

  const ordinals = new Map<string, number>();
  const clusters = new Map<string, number>();
  interface Entry {
    archetypeId: string;
    ordinal: number;
    effectiveAt: Date;
  }
  const visit = (node: Json, path: string, positions: number[], archetypeId: string, entry: Entry | null, depth: number) => {
    if (depth > 40) return;
    for (const [attribute, child] of Object.entries(node)) {
      if (SKIPPED.has(attribute) || attribute.startsWith('_')) continue;
      for (const [at, item] of (Array.isArray(child) ? child : [child]).entries()) {
        if (!isObject(item)) continue;
        const nodeId = typeof item.archetype_node_id === 'string' ? item.archetype_node_id : undefined;
        const itemPath = `${path === '/' ? '' : path}/${attribute}${nodeId ? `[${nodeId}]` : ''}`;
        const itemPositions = [...positions, at];
        const itemArchetype = nodeId && !nodeId.startsWith('at') ? nodeId : archetypeId;
        if (typeof item._type === 'string' && item._type.startsWith('DV_')) {
          const fields = leaf(item);
          if (fields && entry !== null) {
            rows.push({
              ...base,
              ...value(fields, true),
              seq: rows.length,
              entryArchetypeId: entry.archetypeId,
              entryOrdinal: entry.ordinal,
              effectiveAt: entry.effectiveAt,
              archetypeId,
              path: itemPath,
              positions: itemPositions,
              rmType: item._type,
            });
          } else if (fields) {
            rows.push({
              ...base,
              ...value(fields, false),
              seq: rows.length,
              effectiveAt: startTime ?? composition.committedAt,
              archetypeId,
              path: itemPath,
              positions: itemPositions,
              rmType: item._type,
            });
          }
          continue;
        }
        if (entry !== null && item._type === 'CLUSTER' && nodeId && !nodeId.startsWith('at')) {
          // An archetyped cluster: a row with no value, numbered per path, so its instances can be counted (a lab result's analytes).
          const key = `${entry.archetypeId}#${entry.ordinal}${itemPath}`;
          const ordinal = (clusters.get(key) ?? 0) + 1;
          clusters.set(key, ordinal);
          rows.push({
            ...base,
            seq: rows.length,
            entryArchetypeId: entry.archetypeId,
            entryOrdinal: entry.ordinal,
            effectiveAt: entry.effectiveAt,
            archetypeId: itemArchetype,
            path: itemPath,
            positions: itemPositions,
            rmType: 'CLUSTER',
            ordinal,
          });
        }
        let itemEntry = entry;
        if (entry === null && attribute === 'content' && nodeId && ENTRY.test(String(item._type))) {
          const ordinal = (ordinals.get(nodeId) ?? 0) + 1;
          ordinals.set(nodeId, ordinal);
          // An entry's clinical time is its first event's, as the FHIR mapping reads it.
          const effectiveAt = parseTime(rmAt(item, '/data/events/time')?.value) ?? startTime ?? composition.committedAt;
          itemEntry = { archetypeId: nodeId, ordinal, effectiveAt };
          rows.push({
            ...base,
            seq: rows.length,
            entryArchetypeId: nodeId,
            entryOrdinal: ordinal,
            effectiveAt,
            archetypeId: nodeId,
            path: itemPath,
            positions: itemPositions,
            rmType: String(item._type),
          });
        }
        visit(item, itemPath, itemPositions, itemArchetype, itemEntry, depth + 1);
      }
    }
  };
  visit(content, '/', [], rootArchetype, null, 0);
  // The name is compared, never copied: this fixed path is the only one that says anything of a name.
  const type = documentType(content);
  if (type)
    rows.push({
      ...base,
      seq: rows.length,
      effectiveAt: startTime ?? composition.committedAt,
      archetypeId: rootArchetype,
      path: DOCUMENT_TYPE_PATH,
      rmType: 'DV_CODED_TEXT',
      code: type.code,
      terminology: type.terminology ?? null,
    });
  return rows;
}

/**
 * Index rows of one tenant in one fixed statement (arrays unnested), however many: the start-up backfill writes
 * thousands a batch, where an ORM's multi-row insert spends more time building the statement than the database
 * spends writing it.
 */
export async function insertIndexRows(tx: Pick<TenantTx, '$executeRaw'>, tenantId: string, rows: IndexRow[]): Promise<void> {
  if (rows.length === 0) return;
  const column = <T>(pick: (row: IndexRow) => T | null | undefined) => rows.map((row) => pick(row) ?? null);
  const time = (value: Date | string | null | undefined) => (value == null ? null : new Date(value).toISOString());
  await tx.$executeRaw`
    INSERT INTO "ehr"."ClinicalIndexEntry" ("tenantId", "compositionId", "seq", "ehrId", "patientId", "templateId", "area", "entryArchetypeId",
      "entryOrdinal", "effectiveAt", "committedAt", "startTime", "archetypeId", "path", "positions", "rmType", "ordinal", "code", "terminology",
      "magnitude", "unit", "dateTime", "boolean")
    SELECT ${tenantId}, r."compositionId", r."seq", r."ehrId", r."patientId", r."templateId", r."area", r."entryArchetypeId", r."entryOrdinal",
      r."effectiveAt", r."committedAt", r."startTime", r."archetypeId", r."path", r."positions"::int[], r."rmType", r."ordinal", r."code",
      r."terminology", r."magnitude", r."unit", r."dateTime", r."boolean"
    FROM unnest(${column((r) => r.compositionId)}::text[], ${column((r) => r.seq)}::int[], ${column((r) => r.ehrId)}::text[],
      ${column((r) => r.patientId)}::text[], ${column((r) => r.templateId)}::text[], ${column((r) => r.area)}::text[],
      ${column((r) => r.entryArchetypeId)}::text[], ${column((r) => r.entryOrdinal)}::int[], ${column((r) => time(r.effectiveAt))}::timestamp(3)[],
      ${column((r) => time(r.committedAt))}::timestamp(3)[], ${column((r) => time(r.startTime))}::timestamp(3)[], ${column((r) => r.archetypeId)}::text[], ${column((r) => r.path)}::text[],
      ${column((r) => (Array.isArray(r.positions) ? `{${r.positions.join(',')}}` : null))}::text[], ${column((r) => r.rmType)}::text[],
      ${column((r) => r.ordinal)}::int[], ${column((r) => r.code)}::text[], ${column((r) => r.terminology)}::text[],
      ${column((r) => r.magnitude)}::float8[], ${column((r) => r.unit)}::text[], ${column((r) => time(r.dateTime))}::timestamp(3)[],
      ${column((r) => r.boolean)}::boolean[])
    AS r("compositionId", "seq", "ehrId", "patientId", "templateId", "area", "entryArchetypeId", "entryOrdinal", "effectiveAt", "committedAt",
      "startTime", "archetypeId", "path", "positions", "rmType", "ordinal", "code", "terminology", "magnitude", "unit", "dateTime", "boolean")`;
}

/** Replaces a composition's index rows with those of its new latest version (none for a deletion), inside the commit's transaction. */
export async function reindex(tx: TenantTx, composition: IndexedComposition, content: unknown): Promise<void> {
  await tx.clinicalIndexEntry.deleteMany({ where: { compositionId: composition.compositionId } });
  if (content === null) return;
  await tx.clinicalIndexEntry.createMany({ data: indexRows(composition, content) as Prisma.ClinicalIndexEntryCreateManyInput[] });
}
