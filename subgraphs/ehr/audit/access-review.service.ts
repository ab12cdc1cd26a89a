import { AppError, notFound, validationError } from '../../../common/errors';
import { systemClock, type Clock } from '../../../common/clock';
import { Prisma, type AccessLog as AccessLogRow, type AccessLogReview as ReviewRow } from '../db/generated/client';
import type { TenantStore } from '../db/store';
import { parsePaging, type Page } from '../common/paging';
import { parseBound } from '../common/dates';
import { assertCan } from '../policy/rules';
import { PURPOSES_OF_USE } from '../../../common/auth/purpose-of-use';
import type { ConsentService, ConsentView } from '../consents/consent.service';
import type { ConsentPurpose } from '../policy/rules';

/**
 * What the privacy officer's review flags in the access log (NEN 7513 periodic review):
 * - `outside_treatment`: a read on no known grounds (an entry from before grounds were kept), or on `treatment`
 *   grounds by an actor who is not the practitioner of any appointment of that patient (CareGraph keeps no care
 *   team, so an appointment is the one recorded treatment relationship of a person with a patient);
 * - `break_glass`: a read declared as emergency treatment (purpose ETREAT) or on break-glass grounds;
 * - `bulk`: the actor's entries within BULK_WINDOW_MINUTES either side of this one name at least BULK_PATIENTS patients;
 * - `agent`: read by an AI agent (an OAuth client), an integration, or for a responsible user other than the actor.
 */
export const ACCESS_FLAGS = ['outside_treatment', 'break_glass', 'bulk', 'agent'] as const;
export type AccessFlag = (typeof ACCESS_FLAGS)[number];

export const BULK_PATIENTS = 10;
const BULK_WINDOW_MINUTES = 5;
const MAX_REVIEW_BATCH = 100;
const MAX_NOTE = 1000;
const MAX_REPORT_ROWS = 100;

export interface AccessReviewFilter {
  from?: string | null;
  to?: string | null;
  patientId?: string | null;
  actor?: string | null;
  /** Only entries with this flag. */
  flag?: string | null;
  /** true: only entries with at least one flag; false: only entries without one. */
  flagged?: boolean | null;
  /** true: only reviewed entries; false: only entries not yet reviewed. */
  reviewed?: boolean | null;
}

export interface ReviewView {
  entryId: string;
  reviewedBy: string;
  reviewedAt: Date;
  note: string | null;
  flags: AccessFlag[];
}

export type ReviewedEntry = AccessLogRow & { patientId: string; flags: AccessFlag[]; review: ReviewView | null };

interface FlagCount {
  flag: AccessFlag;
  entries: number;
  unreviewed: number;
}

export interface AccessReviewReport {
  tenantId: string;
  from: Date;
  to: Date;
  generatedAt: Date;
  generatedBy: string;
  entries: number;
  patients: number;
  actors: number;
  flagged: number;
  unreviewedFlagged: number;
  flags: FlagCount[];
  /** The flagged entries of the period not yet reviewed, newest first (at most MAX_REPORT_ROWS; unreviewedFlagged counts all). */
  unreviewed: ReviewedEntry[];
  /** The reviews made during the period, newest first (at most MAX_REPORT_ROWS; reviewsDone counts all). */
  reviewsDone: number;
  reviews: ReviewView[];
  bulkPatients: number;
  bulkWindowMinutes: number;
}

interface FlagRow {
  id: string;
  outside_treatment: boolean;
  break_glass: boolean;
  bulk: boolean;
  agent: boolean;
  reviewed: boolean;
}

const flagsOf = (row: Pick<FlagRow, AccessFlag>): AccessFlag[] => ACCESS_FLAGS.filter((flag) => row[flag]);

const reviewView = (row: ReviewRow): ReviewView => ({
  entryId: row.entryId,
  reviewedBy: row.reviewedBy,
  reviewedAt: row.reviewedAt,
  note: row.note,
  flags: row.flags as AccessFlag[],
});

/**
 * The privacy officer's review of the tenant's access log: the entries that name a patient, with their flags,
 * filtered; marking entries reviewed (a separate table and an audit record: the chained log is never changed);
 * the periodic report. The flags are computed in SQL, so filtering and paging run in the database.
 */
export class AccessReviewService {
  constructor(
    private readonly store: TenantStore,
    private readonly consentService: ConsentService,
    private readonly clock: Clock = systemClock,
  ) {}

  /**
   * Consents for the review: one patient's, one per purpose (the recorded decision or the default); without a
   * patient, every decision recorded in the tenant, by patient and purpose.
   */
  async consents(patientId?: string | null): Promise<ConsentView[]> {
    assertCan(this.store.identity, 'reviewAccessLog');
    if (patientId) {
      const exists = await this.store.read((tx) => tx.patient.findFirst({ where: { id: patientId }, select: { id: true } }));
      if (!exists) throw notFound('Patient', patientId);
      return this.consentService.list(patientId);
    }
    const rows = await this.store.read((tx) => tx.consent.findMany({ orderBy: [{ patientId: 'asc' }, { purpose: 'asc' }] }));
    return rows.map((row) => ({
      patientId: row.patientId,
      purpose: row.purpose as ConsentPurpose,
      granted: row.granted,
      recorded: true,
      note: row.note,
      changedAt: row.changedAt,
      changedBy: row.changedBy,
    }));
  }

  /** The flagged view of the tenant's log, as one SQL relation `e` (id, the flags, reviewed) over the filter's entries. */
  private flagged(filter: AccessReviewFilter): { relation: Prisma.Sql; where: Prisma.Sql } {
    for (const name of ['patientId', 'actor'] as const) {
      const value = filter[name];
      if (value !== null && value !== undefined && (value.length === 0 || value.length > 256))
        throw validationError(`'${name}' must be 1..256 characters`, [{ path: name, message: 'invalid length' }]);
    }
    if (filter.flag && !(ACCESS_FLAGS as readonly string[]).includes(filter.flag))
      throw validationError(`Unknown flag '${filter.flag}'`, [{ path: 'flag', message: `one of ${ACCESS_FLAGS.join(', ')}` }]);
    const from = parseBound('from', filter.from);
    const to = parseBound('to', filter.to, true);
    if (from && to && from > to) throw validationError("'from' is after 'to'", [{ path: 'from', message: 'must not be after to' }]);
    const tenantId = this.store.tenantId;
    const conditions = [Prisma.sql`a."tenantId" = ${tenantId}`, Prisma.sql`a."patientId" IS NOT NULL`];
    if (from) conditions.push(Prisma.sql`a.at >= ${from.toISOString()}::timestamp`);
    if (to) conditions.push(Prisma.sql`a.at <= ${to.toISOString()}::timestamp`);
    if (filter.patientId) conditions.push(Prisma.sql`a."patientId" = ${filter.patientId}`);
    if (filter.actor) conditions.push(Prisma.sql`a.actor = ${filter.actor}`);
    const window = Prisma.sql`make_interval(mins => ${BULK_WINDOW_MINUTES})`;
    const relation = Prisma.sql`
      SELECT a.id, a.at, a."patientId", a.actor,
        (a.grounds IS NULL OR (a.grounds = 'treatment' AND NOT EXISTS (
          SELECT 1 FROM "ehr"."Appointment" ap
          WHERE ap."tenantId" = a."tenantId" AND ap."patientId" = a."patientId" AND ap."practitionerId" = a.actor))) AS outside_treatment,
        (a.grounds = 'break-glass' OR a.purpose = ${PURPOSES_OF_USE.emergency}) AS break_glass,
        ((SELECT count(DISTINCT b."patientId") FROM "ehr"."AccessLog" b
          WHERE b."tenantId" = a."tenantId" AND b.actor = a.actor AND b."patientId" IS NOT NULL
            AND b.at BETWEEN a.at - ${window} AND a.at + ${window}) >= ${BULK_PATIENTS}) AS bulk,
        (a.client IS NOT NULL OR 'integration' = ANY(a.roles) OR (a."responsibleUser" IS NOT NULL AND a."responsibleUser" <> a.actor)) AS agent,
        (r."entryId" IS NOT NULL) AS reviewed
      FROM "ehr"."AccessLog" a
      LEFT JOIN "ehr"."AccessLogReview" r ON r."tenantId" = a."tenantId" AND r."entryId" = a.id
      WHERE ${Prisma.join(conditions, ' AND ')}`;
    const outer: Prisma.Sql[] = [Prisma.sql`TRUE`];
    if (filter.flag) outer.push(Prisma.sql`${Prisma.raw(`e.${filter.flag}`)}`);
    if (filter.flagged === true) outer.push(Prisma.sql`(e.outside_treatment OR e.break_glass OR e.bulk OR e.agent)`);
    if (filter.flagged === false) outer.push(Prisma.sql`NOT (e.outside_treatment OR e.break_glass OR e.bulk OR e.agent)`);
    if (filter.reviewed === true) outer.push(Prisma.sql`e.reviewed`);
    if (filter.reviewed === false) outer.push(Prisma.sql`NOT e.reviewed`);
    return { relation, where: Prisma.join(outer, ' AND ') };
  }

  /** The tenant's access log with its flags and reviews, newest first. */
  async list(filter: AccessReviewFilter, limit?: number | null, offset?: number | null): Promise<Page<ReviewedEntry>> {
    assertCan(this.store.identity, 'reviewAccessLog');
    const paging = parsePaging(limit, offset);
    const { relation, where } = this.flagged(filter);
    return this.store.read(async (tx) => {
      const [rows, [{ total }]] = await Promise.all([
        tx.$queryRaw<
          FlagRow[]
        >`WITH e AS (${relation}) SELECT * FROM e WHERE ${where} ORDER BY e.at DESC, e.id ASC LIMIT ${paging.limit} OFFSET ${paging.offset}`,
        tx.$queryRaw<Array<{ total: number }>>`WITH e AS (${relation}) SELECT count(*)::int AS total FROM e WHERE ${where}`,
      ]);
      return { data: await this.entries(tx, rows), pagination: { ...paging, total } };
    });
  }

  /** The entries of flag rows, in their order, with their reviews. */
  private async entries(tx: Parameters<Parameters<TenantStore['read']>[0]>[0], rows: FlagRow[]): Promise<ReviewedEntry[]> {
    const ids = rows.map((row) => row.id);
    if (ids.length === 0) return [];
    const [entries, reviews] = await Promise.all([
      tx.accessLog.findMany({ where: { id: { in: ids } } }),
      tx.accessLogReview.findMany({ where: { entryId: { in: ids } } }),
    ]);
    const byId = new Map(entries.map((entry) => [entry.id, entry]));
    const reviewOf = new Map(reviews.map((review) => [review.entryId, review]));
    return rows.map((row) => {
      const review = reviewOf.get(row.id);
      return { ...(byId.get(row.id)! as ReviewedEntry), flags: flagsOf(row), review: review ? reviewView(review) : null };
    });
  }

  /**
   * Marks entries reviewed, with an optional note: one review row per entry (final: the table is INSERT-only)
   * and one audit record each, in one transaction. Entries of another tenant look absent; an entry already reviewed
   * is a CONFLICT, and then nothing is marked.
   */
  async markReviewed(entryIds: string[], note?: string | null): Promise<ReviewView[]> {
    assertCan(this.store.identity, 'reviewAccessLog');
    const ids = [...new Set(entryIds)];
    if (ids.length === 0 || ids.length > MAX_REVIEW_BATCH)
      throw validationError(`Mark 1..${MAX_REVIEW_BATCH} entries at a time`, [{ path: 'entryIds', message: `1..${MAX_REVIEW_BATCH} ids` }]);
    if (note && note.length > MAX_NOTE) throw validationError('The note is too long', [{ path: 'note', message: `at most ${MAX_NOTE} characters` }]);
    const { relation } = this.flagged({});
    const reviewedBy = this.store.identity.sub;
    return this.store.change(note ?? null, async (tx, audit) => {
      const rows = await tx.$queryRaw<FlagRow[]>`WITH e AS (${relation}) SELECT * FROM e WHERE e.id IN (${Prisma.join(ids)})`;
      const missing = ids.find((id) => !rows.some((row) => row.id === id));
      if (missing) throw notFound('Access log entry', missing);
      const done = rows.filter((row) => row.reviewed).map((row) => row.id);
      if (done.length > 0) throw new AppError('CONFLICT', `Already reviewed: ${done.join(', ')}`, [{ path: 'entryIds', message: 'already reviewed' }]);
      const reviewedAt = this.clock.now();
      const reviews = rows.map((row) => ({ tenantId: this.store.tenantId, entryId: row.id, reviewedBy, reviewedAt, note: note ?? null, flags: flagsOf(row) }));
      await tx.accessLogReview.createMany({ data: reviews });
      for (const review of reviews) {
        await audit.record({
          action: 'review',
          entityType: 'AccessLog',
          entityId: review.entryId,
          after: { reviewedBy, reviewedAt, note: review.note, flags: review.flags },
        });
      }
      return reviews.map((review) => reviewView(review as ReviewRow));
    });
  }

  /** The periodic review report of the tenant for [from, to] (YYYY-MM-DD, `to` including its day, or timestamps). */
  async report(period: { from: string; to: string }): Promise<AccessReviewReport> {
    assertCan(this.store.identity, 'reviewAccessLog');
    const from = parseBound('from', period.from)!;
    const to = parseBound('to', period.to, true)!;
    if (!from || !to) throw validationError("A report needs 'from' and 'to'", [{ path: from ? 'to' : 'from', message: 'required' }]);
    const { relation } = this.flagged(period);
    const counts = await this.store.read(async (tx) => {
      const [summary] = await tx.$queryRaw<Array<Record<string, number>>>`
        WITH e AS (${relation})
        SELECT (SELECT count(*)::int FROM e) AS entries,
               (SELECT count(DISTINCT e."patientId")::int FROM e) AS patients,
               (SELECT count(DISTINCT e.actor)::int FROM e) AS actors,
               ${Prisma.join(
                 ACCESS_FLAGS.flatMap((flag) => [
                   Prisma.sql`(SELECT count(*)::int FROM e WHERE ${Prisma.raw(`e.${flag}`)}) AS ${Prisma.raw(`"${flag}"`)}`,
                   Prisma.sql`(SELECT count(*)::int FROM e WHERE ${Prisma.raw(`e.${flag}`)} AND NOT e.reviewed) AS ${Prisma.raw(`"${flag}_unreviewed"`)}`,
                 ]),
               )},
               (SELECT count(*)::int FROM e WHERE e.outside_treatment OR e.break_glass OR e.bulk OR e.agent) AS flagged`;
      const reviewWhere = { reviewedAt: { gte: from, lte: to } };
      const [reviews, reviewsDone] = await Promise.all([
        tx.accessLogReview.findMany({ where: reviewWhere, orderBy: [{ reviewedAt: 'desc' }, { entryId: 'asc' }], take: MAX_REPORT_ROWS }),
        tx.accessLogReview.count({ where: reviewWhere }),
      ]);
      return { summary, reviews: reviews.map(reviewView), reviewsDone };
    });
    const unreviewed = await this.list({ ...period, flagged: true, reviewed: false }, MAX_REPORT_ROWS, 0);
    const { summary } = counts;
    return {
      tenantId: this.store.tenantId,
      from,
      to,
      generatedAt: this.clock.now(),
      generatedBy: this.store.identity.sub,
      entries: summary.entries,
      patients: summary.patients,
      actors: summary.actors,
      flagged: summary.flagged,
      unreviewedFlagged: unreviewed.pagination.total,
      flags: ACCESS_FLAGS.map((flag) => ({ flag, entries: summary[flag], unreviewed: summary[`${flag}_unreviewed`] })),
      unreviewed: unreviewed.data,
      reviewsDone: counts.reviewsDone,
      reviews: counts.reviews,
      bulkPatients: BULK_PATIENTS,
      bulkWindowMinutes: BULK_WINDOW_MINUTES,
    };
  }
}
