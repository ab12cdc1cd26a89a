import { randomUUID } from 'node:crypto';
import type { FieldCipher } from '../../common/crypto';
import type { Database } from '../../common/db/database';
import { demoOpt } from '../../subgraphs/ehr/clinical/templates';
import { operational } from '../../subgraphs/ehr/clinical/opt/operational';
import { toCanonical } from '../../subgraphs/ehr/clinical/opt/formats';
import { simpleFormOf } from '../../subgraphs/ehr/clinical/simple-forms';
import { indexRows, type IndexRow } from '../../subgraphs/ehr/compositions/clinical-index';

const TENANT = 'demo';
const DAY = 86_400_000;
/** Compositions per INSERT statement (each a few dozen index rows). */
const BATCH = 2000;
/** Of each patient's compositions, these are lab results; the others vital signs. */
const LAB_EVERY = 4;
const LAB_TESTS: Array<[string, string, string, number, string]> = [
  ['2345-7', 'Glucose', 'Glucose', 5.4, 'mmol/L'],
  ['4548-4', 'Hemoglobin A1c', 'HbA1c', 48, 'mmol/mol'],
  ['2160-0', 'Creatinine', 'Creatinine', 80, 'umol/L'],
];

export interface ClinicalLoad {
  /** Patients clin-p-<n> for n in [fromPatient, fromPatient + patients), each with an EHR. */
  fromPatient: number;
  patients: number;
  compositionsPerPatient: number;
  /** openEHR system id of the version uids (OPENEHR_SYSTEM_ID). */
  systemId: string;
  /** Clinical times fall in the `days` days before `now`. */
  now: Date;
  days: number;
  onProgress?: (done: number, total: number) => void;
}

export const clinicalPatientId = (n: number) => `clin-p-${String(n).padStart(7, '0')}`;

/** A deterministic pseudo-random number in [0, 1) from integers (the same data in every run). */
function noise(...keys: number[]): number {
  let h = 2166136261;
  for (const k of keys) h = Math.imul(h ^ k, 16777619) ^ (h >>> 13);
  return ((h >>> 0) % 1_000_003) / 1_000_003;
}

/**
 * Distinct contents per template. A composition's content is one of them, so the canonical form and index rows
 * of each are computed once per load (every composition is still encrypted on its own, as the service does).
 */
const VARIANTS = 2000;

/** The simple-form body of patient `p`'s composition `k` (docs/api.md §10 forms): lab results every LAB_EVERY-th, else vital signs. */
export function clinicalContent(p: number, k: number, load: Pick<ClinicalLoad, 'now' | 'days'>): { templateId: string; content: Record<string, unknown> } {
  return variantContent(k % LAB_EVERY === LAB_EVERY - 1, Math.floor(noise(p, k) * VARIANTS), load);
}

function variantContent(lab: boolean, v: number, load: Pick<ClinicalLoad, 'now' | 'days'>): { templateId: string; content: Record<string, unknown> } {
  const at = new Date(load.now.getTime() - Math.floor(noise(v, lab ? 1 : 0, 1) * load.days * DAY)).toISOString().replace(/\.\d{3}Z$/, 'Z');
  if (lab) {
    const [code, name, analyte, typical, unit] = LAB_TESTS[v % LAB_TESTS.length];
    return {
      templateId: 'lab_result.v1',
      content: {
        lab_result: {
          test_name: { code, value: name },
          status: { code: 'final' },
          specimen_collected_at: at,
          results: [{ analyte, value: { magnitude: Math.round(typical * (0.7 + 0.6 * noise(v, 2)) * 10) / 10, unit } }],
        },
      },
    };
  }
  return {
    templateId: 'vital_signs.v1',
    content: {
      blood_pressure: {
        systolic: { magnitude: 100 + Math.floor(noise(v, 3) * 80), unit: 'mm[Hg]' },
        diastolic: { magnitude: 60 + Math.floor(noise(v, 4) * 40), unit: 'mm[Hg]' },
      },
      pulse: { rate: { magnitude: 50 + Math.floor(noise(v, 5) * 60), unit: '/min' } },
      recorded_at: at,
    },
  };
}

const templates = new Map<string, ReturnType<typeof operational>>();
/** A demo OPT, parsed once (operational() caches too, but keyed by a hash of the whole file). */
function templateOf(templateId: string): ReturnType<typeof operational> {
  if (!templates.has(templateId)) templates.set(templateId, operational(demoOpt(templateId)));
  return templates.get(templateId)!;
}

/** Simple form → canonical COMPOSITION, as CompositionService.storedContent converts a demo template's simple body. */
function canonical(templateId: string, content: Record<string, unknown>, composer: string): Record<string, unknown> {
  const { webTemplate } = templateOf(templateId);
  const form = simpleFormOf(templateId, webTemplate.tree.id)!;
  return toCanonical(form.toFlat(content, composer), 'FLAT', webTemplate) as Record<string, unknown>;
}

/** A column of a batch: its values as one array parameter, and a cast of each (an int[] travels as its text). */
type Column = [name: string, sqlType: string, values: unknown[], cast?: string];

/**
 * One statement of multi-row INSERT … SELECT FROM unnest(…), one per table, as data-modifying CTEs: a single round
 * trip, so the next batch is built while the database writes this one (foreign keys are checked at its end).
 */
function insertStatement(tables: Array<{ table: string; columns: Column[]; constants: Record<string, string> }>): { text: string; values: unknown[][] } {
  const values: unknown[][] = [];
  const inserts = tables.map(({ table, columns, constants }) => {
    const names = [...columns.map(([name]) => name), ...Object.keys(constants)].map((c) => `"${c}"`).join(', ');
    const params = columns.map(([, type, column]) => `$${values.push(column)}::${type}`).join(', ');
    const selected = [...columns.map(([, , , cast], i) => `u.c${i}${cast ? `::${cast}` : ''}`), ...Object.values(constants)].join(', ');
    return `INSERT INTO ehr."${table}" (${names}) SELECT ${selected} FROM unnest(${params}) AS u(${columns.map((_, i) => `c${i}`).join(', ')})`;
  });
  const last = inserts.pop()!;
  return { text: `WITH ${inserts.map((sql, i) => `t${i} AS (${sql})`).join(', ')} ${last}`, values };
}

/**
 * Patients with EHRs and their compositions, written straight into the ehr schema in batches: the rows the
 * composition service commits (Composition, CompositionVersion with the content encrypted by the service's
 * cipher, ClinicalIndexEntry from its indexRows), the content converted from the demo templates' simple forms
 * as the service converts it. Not written: the audit trail of each commit (a bulk load is not a clinical commit).
 * Returns the compositions written.
 */
export async function loadClinicalCompositions(db: Database, cipher: FieldCipher, load: ClinicalLoad): Promise<number> {
  const total = load.patients * load.compositionsPerPatient;
  const patientsPerBatch = Math.max(1, Math.floor(BATCH / load.compositionsPerPatient));
  let done = 0;
  let writing: Promise<unknown> = Promise.resolve();
  for (let first = load.fromPatient; first < load.fromPatient + load.patients; first += patientsPerBatch) {
    const numbers = Array.from({ length: Math.min(patientsPerBatch, load.fromPatient + load.patients - first) }, (_, i) => first + i);
    const statement = batchStatement(cipher, load, numbers);
    await writing;
    if (done > 0) load.onProgress?.(done, total);
    writing = db.query(statement.text, statement.values);
    done += numbers.length * load.compositionsPerPatient;
  }
  await writing;
  load.onProgress?.(done, total);
  return done;
}

/** The ClinicalIndexEntry columns besides the ids, in the order `indexValues` lists them. */
const INDEX_COLUMNS: Array<[name: string, sqlType: string, cast?: string]> = [
  ['seq', 'int[]'],
  ['templateId', 'text[]'],
  ['area', 'text[]'],
  ['entryArchetypeId', 'text[]'],
  ['entryOrdinal', 'int[]'],
  ['effectiveAt', 'timestamp(3)[]'],
  ['startTime', 'timestamp(3)[]'],
  ['archetypeId', 'text[]'],
  ['path', 'text[]'],
  ['positions', 'text[]', 'int[]'],
  ['rmType', 'text[]'],
  ['ordinal', 'int[]'],
  ['code', 'text[]'],
  ['terminology', 'text[]'],
  ['magnitude', 'float8[]'],
  ['unit', 'text[]'],
  ['dateTime', 'timestamp(3)[]'],
  ['boolean', 'bool[]'],
];

function indexValues(r: IndexRow): unknown[] {
  const time = (d: unknown) => (d instanceof Date ? d.toISOString() : null);
  return [
    r.seq,
    r.templateId,
    r.area,
    r.entryArchetypeId ?? null,
    r.entryOrdinal ?? null,
    time(r.effectiveAt),
    time(r.startTime),
    r.archetypeId,
    r.path,
    Array.isArray(r.positions) ? `{${r.positions.join(',')}}` : null,
    r.rmType,
    r.ordinal ?? null,
    r.code ?? null,
    r.terminology ?? null,
    r.magnitude ?? null,
    r.unit ?? null,
    time(r.dateTime),
    r.boolean ?? null,
  ];
}

interface Variant {
  templateId: string;
  json: string;
  /** indexValues of each index row: the content holds its own times, so rows differ between compositions only in their ids and commit time. */
  rows: unknown[][];
}
const variants = new Map<string, Variant>();

/** Patient `p`'s composition `k` as stored: canonical JSON and index rows (computed once per distinct content). */
function stored(p: number, k: number, load: ClinicalLoad): Variant {
  const { templateId, content } = clinicalContent(p, k, load);
  const key = `${load.now.getTime()}:${JSON.stringify(content)}`;
  let variant = variants.get(key);
  if (!variant) {
    const composition = canonical(templateId, content, 'bench');
    const rows = indexRows({ compositionId: '', ehrId: '', patientId: '', templateId, area: 'observation', committedAt: load.now }, composition);
    variant = { templateId, json: JSON.stringify(composition), rows: rows.map(indexValues) };
    variants.set(key, variant);
  }
  return variant;
}

/** The INSERT of patients `numbers`, their EHRs and compositions (versions and index rows included). */
function batchStatement(cipher: FieldCipher, load: ClinicalLoad, numbers: number[]): { text: string; values: unknown[][] } {
  const patientIds = numbers.map(clinicalPatientId);
  const ehrIds = patientIds.map((id) => `ehr-${id}`);
  const compositions: Array<{ id: string; ehrId: string; patientId: string; templateId: string; committedAt: string; contentEnc: string }> = [];
  const ids: string[][] = [[], [], [], []];
  const index: unknown[][] = INDEX_COLUMNS.map(() => []);
  numbers.forEach((n, i) => {
    for (let k = 0; k < load.compositionsPerPatient; k++) {
      const { templateId, json, rows } = stored(n, k, load);
      const committedAt = new Date(load.now.getTime() - (load.compositionsPerPatient - k) * 1000);
      const id = randomUUID();
      compositions.push({
        id,
        ehrId: ehrIds[i],
        patientId: patientIds[i],
        templateId,
        committedAt: committedAt.toISOString(),
        contentEnc: cipher.encrypt(json),
      });
      for (const row of rows) {
        ids[0].push(id);
        ids[1].push(ehrIds[i]);
        ids[2].push(patientIds[i]);
        ids[3].push(committedAt.toISOString());
        row.forEach((value, c) => index[c].push(value));
      }
    }
  });
  const tenant = (rows: unknown[]) => rows.map(() => TENANT);
  const of = <T>(pick: (c: (typeof compositions)[number]) => T) => compositions.map(pick);
  return insertStatement([
    {
      table: 'Patient',
      columns: [
        ['tenantId', 'text[]', tenant(numbers)],
        ['id', 'text[]', patientIds],
        ['ehrId', 'text[]', ehrIds],
        ['family', 'text[]', numbers.map((n) => `Clinical ${n}`)],
        ['birthDate', 'text[]', numbers.map((n) => `19${40 + (n % 60)}-01-01`)],
      ],
      constants: { givenNames: `ARRAY['Bench']`, gender: `'unknown'`, updatedAt: 'now()' },
    },
    {
      table: 'Ehr',
      columns: [
        ['tenantId', 'text[]', tenant(numbers)],
        ['id', 'text[]', ehrIds],
        ['patientId', 'text[]', patientIds],
      ],
      constants: { updatedAt: 'now()' },
    },
    {
      table: 'Composition',
      columns: [
        ['tenantId', 'text[]', tenant(compositions)],
        ['id', 'text[]', of((c) => c.id)],
        ['ehrId', 'text[]', of((c) => c.ehrId)],
        ['patientId', 'text[]', of((c) => c.patientId)],
        ['templateId', 'text[]', of((c) => c.templateId)],
        ['createdAt', 'timestamp(3)[]', of((c) => c.committedAt)],
        ['updatedAt', 'timestamp(3)[]', of((c) => c.committedAt)],
      ],
      constants: { area: `'observation'`, latestVersion: '1' },
    },
    {
      table: 'CompositionVersion',
      columns: [
        ['tenantId', 'text[]', tenant(compositions)],
        ['compositionId', 'text[]', of((c) => c.id)],
        ['uid', 'text[]', of((c) => `${c.id}::${load.systemId}::1`)],
        ['contentEnc', 'text[]', of((c) => c.contentEnc)],
        ['committedAt', 'timestamp(3)[]', of((c) => c.committedAt)],
      ],
      constants: { version: '1', changeType: `'creation'`, committer: `'bench'` },
    },
    {
      table: 'ClinicalIndexEntry',
      columns: [
        ['tenantId', 'text[]', tenant(ids[0])],
        ['compositionId', 'text[]', ids[0]],
        ['ehrId', 'text[]', ids[1]],
        ['patientId', 'text[]', ids[2]],
        ['committedAt', 'timestamp(3)[]', ids[3]],
        ...INDEX_COLUMNS.map(([name, type, cast], c): Column => [name, type, index[c], cast]),
      ],
      constants: {},
    },
  ]);
}
