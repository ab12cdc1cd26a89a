import type { Prisma } from '../../db/generated/client';
import type { DataArea } from '../../policy/rules';
import { DOCUMENT_TYPE_PATH, type EntryCondition, type EntryLeaf, type EntryOrder, type LeafTest } from '../../compositions/clinical-index';
import {
  ARCHETYPE,
  CLINICAL_NOTE,
  DOC_CATEGORY,
  LOINC,
  MEDICATION_ORDER_END,
  OBSERVATION_CATEGORY,
  OBSERVATION_KINDS,
  UCUM,
  parseResourceId,
  type ObservationKind,
} from './mapping';
import { parseDateParam, parseQuantityParam, parseToken, searchedPatientIds, type DateParam, type ParsedSearch, type SearchCriterion } from './search';

/**
 * FHIR search over the clinical index (docs/exchange.md "Search from the
 * clinical index"): a search of a composition-backed type as the entries the
 * index selects, so it runs in SQL and only the page is decrypted. Each
 * criterion is answered either by the entry row's columns (patient, clinical
 * time, commit time, id) or, per kind of entry, by leaves the entry has or
 * lacks (all of them, or one of a choice); a criterion the index cannot answer
 * for a kind of entry that is among the candidates makes the whole search run
 * in memory.
 */

/**
 * What a kind of entry says of a criterion: all its entries match (true), none (false), those with all
 * `requires`, none of `excludes` and, of each choice in `anyOf`, one test met; null: the index cannot tell.
 */
type KindTest = boolean | { requires: EntryLeaf[]; excludes: EntryLeaf[]; anyOf: LeafTest[][] } | null;

interface Kind {
  archetypeId: string;
  /** The leaf the mapper needs for the resource to exist. */
  requires?: string;
  observation?: ObservationKind;
  /** The category every resource of the kind has. */
  category?: { system: string; code: string };
  /** The status every resource of the kind has. */
  status?: string;
  /** The end date leaf a MedicationRequest's status follows. */
  ends?: string;
  /** Parameters whose element no resource of the kind has. */
  lacks?: string[];
  /** The composition's coded leaf that is the resource's `type` (a LOINC code, whatever its terminology). */
  type?: EntryLeaf;
}

interface IndexedType {
  area: DataArea;
  kinds: Kind[];
  /** The entry-row column the type's clinical time (`date`, the default sort) is. */
  date: 'effectiveAt' | 'committedAt';
}

const INDEXED_TYPES: Record<string, IndexedType> = {
  Observation: {
    area: 'observation',
    kinds: OBSERVATION_KINDS.map((o) => ({
      archetypeId: o.archetypeId,
      requires: o.requires,
      observation: o,
      category: { system: OBSERVATION_CATEGORY, code: o.category },
    })),
    date: 'effectiveAt',
  },
  // The Encounter's period.start is its composition's start time (mandatory in an event context), which is its entry's clinical time.
  Encounter: { area: 'encounter', kinds: [{ archetypeId: ARCHETYPE.reasonForEncounter }], date: 'effectiveAt' },
  // authoredOn is the commit time.
  MedicationRequest: { area: 'order', kinds: [{ archetypeId: ARCHETYPE.medication, ends: MEDICATION_ORDER_END }], date: 'committedAt' },
  // A clinical note's date is its composition's start time (mandatory in an event context), which is its entry's clinical time.
  DocumentReference: {
    area: 'document',
    kinds: [
      {
        archetypeId: ARCHETYPE.synopsis,
        category: { system: DOC_CATEGORY, code: CLINICAL_NOTE.category },
        status: CLINICAL_NOTE.status,
        lacks: ['security-label', 'format'],
        type: { path: DOCUMENT_TYPE_PATH, ofComposition: true },
      },
    ],
    date: 'effectiveAt',
  },
};

/** The data area of a type whose searches the index may answer (undefined: never). */
export const indexedArea = (resourceType: string): DataArea | undefined => INDEXED_TYPES[resourceType]?.area;

export interface IndexedQuery {
  area: DataArea;
  /** The patients the search is limited to (null: none named). */
  patientIds: string[] | null;
  entries: EntryCondition[];
  /**
   * Kinds of entry some criterion cannot be told of from the index, with the
   * criteria it can: when any entry is of them, the search must run in memory
   * (e.g. a lab result's value-quantity); when none is, they add nothing.
   */
  undecided: EntryCondition[];
  where: Prisma.ClinicalIndexEntryWhereInput[];
  order: EntryOrder[];
}

/** The mapped top-level slots of a template (they decide resource ids: `<uuid>` for one slot, `<uuid>.<key>` for several). */
export interface TemplateSlots {
  templateId: string;
  slots: Array<{ key: string; archetypeId: string }>;
}

/** A search as clinical-index conditions, or null when some criterion needs the decrypted resources. */
export function indexedQuery(resourceType: string, search: ParsedSearch, templates: TemplateSlots[]): IndexedQuery | null {
  const type = INDEXED_TYPES[resourceType];
  if (!type) return null;
  const patients = search.criteria.filter((c) => c.kind === 'reference' && !c.modifier);
  const where: Prisma.ClinicalIndexEntryWhereInput[] = [];
  const kindCriteria: SearchCriterion[] = [];
  for (const criterion of search.criteria) {
    if (patients.includes(criterion)) continue;
    const column = criterion.name === '_lastUpdated' ? 'committedAt' : criterion.name === 'date' ? type.date : undefined;
    if (column && criterion.modifier !== 'missing') where.push({ OR: criterion.values.map((v) => timeCondition(column, parseDateParam(criterion.name, v))) });
    else if (criterion.kind === 'id') where.push({ OR: criterion.values.flatMap((id) => idConditions(id, templates)) });
    else kindCriteria.push(criterion);
  }
  const entries: EntryCondition[] = [];
  const undecided: EntryCondition[] = [];
  for (const kind of type.kinds) {
    const tests = kindCriteria.map((c) => kindTest(kind, c));
    if (tests.includes(false)) continue;
    const leaves = tests.filter((t) => typeof t === 'object' && t !== null);
    (tests.includes(null) ? undecided : entries).push({
      archetypeId: kind.archetypeId,
      requires: [...(kind.requires ? [{ path: kind.requires }] : []), ...leaves.flatMap((t) => t.requires)],
      excludes: leaves.flatMap((t) => t.excludes),
      anyOf: leaves.flatMap((t) => t.anyOf),
    });
  }
  const sort = search.sort.length ? search.sort : [{ name: 'date', descending: true }];
  return {
    area: type.area,
    patientIds: searchedPatientIds(search.criteria),
    entries,
    undecided,
    where,
    order: sort.map(({ name, descending }) => ({ key: name === '_id' ? 'id' : name === '_lastUpdated' ? 'committedAt' : type.date, descending })),
  };
}

/** A date parameter on an entry-row time, as matchesDate reads a point in time. */
function timeCondition(column: 'effectiveAt' | 'committedAt', p: DateParam): Prisma.ClinicalIndexEntryWhereInput {
  const range = { gte: new Date(p.lo), lt: new Date(p.hi) };
  switch (p.prefix) {
    case 'eq':
      return { [column]: range };
    case 'ne':
      return { NOT: { [column]: range } };
    case 'lt':
      return { [column]: { lt: range.gte } };
    case 'le':
      return { [column]: { lt: range.lt } };
    case 'gt':
      return { [column]: { gte: range.lt } };
    case 'ge':
      return { [column]: { gte: range.gte } };
  }
}

/** The entry rows a resource id names: `<uuid>` in a one-slot template, `<uuid>.<key>` in a template of several. */
function idConditions(id: string, templates: TemplateSlots[]): Prisma.ClinicalIndexEntryWhereInput[] {
  const ref = parseResourceId(id);
  if (!ref) return [];
  return templates.flatMap(({ templateId, slots }) => {
    const slot = slots.length === 1 ? (ref.key === undefined ? slots[0] : undefined) : slots.find((s) => ref.key !== undefined && s.key === ref.key);
    return slot ? [{ compositionId: ref.compositionId, templateId, entryArchetypeId: slot.archetypeId }] : [];
  });
}

/** A criterion on a kind of entry, `:not` and `:missing` included. */
function kindTest(kind: Kind, criterion: SearchCriterion): KindTest {
  // `:missing=true` asks for absence, `:missing=false` for presence; token `:not` for the resources without any of the values.
  if (criterion.modifier === 'missing') return criterion.values[0] === 'true' ? negate(presence(kind, criterion.name)) : presence(kind, criterion.name);
  const test = valueTest(kind, criterion);
  return criterion.modifier === 'not' ? negate(test) : test;
}

/** The negation of a test: of a conjunction of leaf tests, the choice of their opposites; of one choice, the conjunction of its opposites. */
function negate(test: KindTest): KindTest {
  if (test === null) return null;
  if (typeof test === 'boolean') return !test;
  const { requires, excludes, anyOf } = test;
  if (anyOf.length === 0) return choice([...requires.map((leaf) => ({ leaf, absent: true })), ...excludes.map((leaf) => ({ leaf }))]);
  // The negation of several choices, or of choices and single tests, is a disjunction of conjunctions: not said here.
  if (anyOf.length > 1 || requires.length + excludes.length > 0) return null;
  return {
    requires: anyOf[0].filter((t) => t.absent).map((t) => t.leaf),
    excludes: anyOf[0].filter((t) => !t.absent).map((t) => t.leaf),
    anyOf: [],
  };
}

/** One of the tests met (none: false; one: that test alone). */
function choice(tests: LeafTest[]): KindTest {
  if (tests.length === 0) return false;
  if (tests.length > 1) return { requires: [], excludes: [], anyOf: [tests] };
  const [{ leaf, absent }] = tests;
  return absent ? { requires: [], excludes: [leaf], anyOf: [] } : has(leaf);
}

const has = (leaf: EntryLeaf): KindTest => ({ requires: [leaf], excludes: [], anyOf: [] });

/** A kind's valueQuantity meeting `where` (none: present): its quantity leaf, and when only one cluster at a path gives it one, no second cluster there. */
function quantityTest(observation: ObservationKind, where?: Prisma.ClinicalIndexEntryWhereInput): KindTest {
  if (observation.quantity === null) return false;
  const leaf = { path: observation.quantity, ...(where ? { where } : {}) };
  const second = observation.onlyCluster ? [{ path: observation.onlyCluster, where: { rmType: 'CLUSTER', ordinal: 2 } }] : [];
  return { requires: [leaf], excludes: second, anyOf: [] };
}

/** Whether a kind's resources have the value a parameter searches (for `:missing`). */
function presence(kind: Kind, name: string): KindTest {
  if (kind.lacks?.includes(name)) return false;
  switch (name) {
    case 'value-quantity':
      return kind.observation ? quantityTest(kind.observation) : null;
    case 'status':
      // A MedicationRequest always has one (active or completed).
      return kind.ends || kind.status ? true : null;
    case 'type':
      return kind.type ? has(kind.type) : null;
    default:
      // patient/subject, date, _lastUpdated, code, category and intent are set on every resource these kinds map to.
      return true;
  }
}

const tokens = (criterion: SearchCriterion) => criterion.values.map(parseToken);

/** The codes of a token criterion's LOINC (or system-less) values; 'any' when one names LOINC without a code. */
function loincCodes(criterion: SearchCriterion): string[] | 'any' {
  const loinc = tokens(criterion).filter((t) => t.system === undefined || t.system === LOINC);
  return loinc.some((t) => t.code === undefined) ? 'any' : loinc.map((t) => t.code!);
}

function valueTest(kind: Kind, criterion: SearchCriterion): KindTest {
  const observation = kind.observation;
  if (kind.lacks?.includes(criterion.name)) return false;
  switch (criterion.name) {
    case 'code': {
      if (!observation) return null;
      const codes = loincCodes(criterion);
      if (codes === 'any') return true;
      if ('fixed' in observation.code) return codes.includes(observation.code.fixed);
      return codes.length > 0 && has({ path: observation.code.leaf, where: { code: { in: codes } } });
    }
    case 'category': {
      const category = kind.category;
      if (!category) return null;
      return tokens(criterion).some((t) => (t.system === undefined || t.system === category.system) && (t.code === undefined || t.code === category.code));
    }
    case 'value-quantity': {
      if (!observation) return null;
      const alternatives = criterion.values.flatMap((v) => quantityCondition(parseQuantityParam('value-quantity', v)));
      return alternatives.length > 0 && quantityTest(observation, { magnitude: { not: null }, OR: alternatives });
    }
    case 'type': {
      // The mapping codes a note's type in LOINC; a note without one has no type.
      if (!kind.type) return null;
      const codes = loincCodes(criterion);
      if (codes === 'any') return has(kind.type);
      return codes.length > 0 && has({ ...kind.type, where: { code: { in: codes } } });
    }
    case 'intent':
      // A string element: only a bare code matches.
      return tokens(criterion).some((t) => t.system === undefined && t.code === 'order');
    case 'status': {
      // A string element: only a bare code matches.
      if (kind.status) return tokens(criterion).some((t) => t.system === undefined && t.code === kind.status);
      if (!kind.ends) return null;
      // Completed once the end date is before today (UTC), as the mapping decides; active otherwise, an order without an end too.
      const codes = tokens(criterion).flatMap((t) => (t.system === undefined && t.code !== undefined ? [t.code] : []));
      const active = codes.includes('active');
      const completed = codes.includes('completed');
      if (active === completed) return active;
      const today = new Date(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`);
      const ended = has({ path: kind.ends, where: { dateTime: { lt: today } } });
      return completed ? ended : negate(ended);
    }
    default:
      return null;
  }
}

/** A quantity parameter on an indexed quantity leaf, as matchesQuantity reads the mapped valueQuantity (UCUM; a proportion's unit is %). */
function quantityCondition(p: ReturnType<typeof parseQuantityParam>): Prisma.ClinicalIndexEntryWhereInput[] {
  if (p.system && p.system !== UCUM) return [];
  const value = (): Prisma.ClinicalIndexEntryWhereInput => {
    switch (p.prefix) {
      case 'eq':
        return { magnitude: { gte: p.lo, lt: p.hi } };
      case 'ne':
        return { NOT: { magnitude: { gte: p.lo, lt: p.hi } } };
      case 'lt':
        return { magnitude: { lt: p.value } };
      case 'le':
        return { magnitude: { lte: p.value } };
      case 'gt':
        return { magnitude: { gt: p.value } };
      case 'ge':
        return { magnitude: { gte: p.value } };
    }
  };
  if (!p.code) return [value()];
  const unit: Prisma.ClinicalIndexEntryWhereInput = {
    OR: [{ rmType: { not: 'DV_PROPORTION' }, unit: p.code }, ...(p.code === '%' ? [{ rmType: 'DV_PROPORTION' }] : [])],
  };
  return [{ AND: [value(), unit] }];
}
