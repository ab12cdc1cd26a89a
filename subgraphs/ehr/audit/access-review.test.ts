import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Identity } from '../../../common/auth/principal';
import { openDatabase, type Database } from '../../../common/db/database';
import { migrate } from '../../../common/db/migrate';
import { testBackends, type TestDatabase } from '../../../common/db/test-backends';
import { createEhrPrisma, type EhrPrisma } from '../db/client';
import { TenantStore } from '../db/store';
import { ConsentService } from '../consents/consent.service';
import { AccessPolicyService } from '../policy/access-policy.service';
import { RecordPrivacyService } from '../privacy/privacy.service';
import { AccessReviewService, BULK_PATIENTS } from './access-review.service';
import { AuditService } from './audit.service';
import { chainKey } from './chain';
import { CheckpointLog } from './checkpoints';

/**
 * The privacy officer's review of the access log against the real database: the flags as the service computes
 * them in SQL, the filters, marking entries reviewed (a separate, INSERT-only table and an audit record; the
 * chained log stays untouched and verifies), the report, and one tenant's review seeing nothing of another's.
 */
const AUDIT_KEY = Buffer.alloc(32, 9);
const KEY = chainKey(AUDIT_KEY);

describe.each(testBackends())('access-log review on $name', (backend) => {
  let database: TestDatabase;
  let db: Database;
  let prisma: EhrPrisma;
  let checkpoints: CheckpointLog;
  const dir = mkdtempSync(join(tmpdir(), 'caregraph-review-'));
  const TENANT = 't-review';
  const OTHER = 't-other';

  beforeAll(async () => {
    database = await backend.create();
    db = await openDatabase({ databaseUrl: database.databaseUrl, dataDir: dir });
    await migrate(db, 'ehr');
    prisma = createEhrPrisma(db);
    checkpoints = new CheckpointLog(join(dir, 'checkpoints.jsonl'), AUDIT_KEY);
  }, 300_000);

  afterAll(async () => {
    await prisma?.$disconnect();
    await db?.close();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  const store = (identity: Omit<Identity, 'tenantId'>, tenantId = TENANT) =>
    new TenantStore(prisma, { ...identity, tenantId }, { transactionalReads: db.kind === 'postgres', chainKey: KEY });
  const officer = (tenantId = TENANT) => {
    const s = store({ sub: 'privacy@example.com', roles: ['admin'] }, tenantId);
    return new AccessReviewService(s, new ConsentService(s, new AccessPolicyService(s)));
  };
  /** Reads of `patients` (one entry each) by the caller, as the services log them. */
  const read = (identity: Omit<Identity, 'tenantId'>, patients: string[], options: { purpose?: string; tenantId?: string } = {}) => {
    const s = store(identity, options.tenantId);
    return s.read((tx) =>
      s.logAccess(
        tx,
        patients.map((patientId) => ({ entityType: 'Patient', entityId: patientId, patientId, action: 'read' as const, purpose: options.purpose })),
      ),
    );
  };
  const all = async (filter: Parameters<AccessReviewService['list']>[0] = {}) => (await officer().list(filter, 100)).data;
  const flagsBy = async (actor: string) => (await all({ actor })).map((e) => [e.patientId, e.flags]);

  beforeAll(async () => {
    const seed = store({ sub: 'seed', roles: ['admin'] });
    await seed.read(async (tx) => {
      for (const id of ['p-1', 'p-2']) await tx.patient.create({ data: { tenantId: TENANT, id, ehrId: `ehr-${id}`, givenNames: ['A'], family: id } });
      const start = new Date('2026-12-01T09:00:00Z');
      await tx.appointment.create({
        data: { tenantId: TENANT, id: 'appt-1', patientId: 'p-1', start, end: new Date(start.getTime() + 1_800_000), status: 'booked', practitionerId: 'dr-a' },
      });
    });
    const clinician = { sub: 'dr-a', roles: ['clinician' as const] };
    await read(clinician, ['p-1']);
    await read(clinician, ['p-2']);
    await read({ sub: 'dr-b', roles: ['clinician'] }, ['p-1'], { purpose: 'ETREAT' });
    await read({ sub: 'bot', roles: ['clinician'], agent: { client: 'claude-desktop' } }, ['p-1']);
    await read({ sub: 'lab-link', roles: ['integration'] }, ['p-1']);
    await read({ sub: 'p-1', roles: ['patient'], patientId: 'p-1' }, ['p-1']);
    const many = Array.from({ length: BULK_PATIENTS }, (_, i) => `q-${i}`);
    await read({ sub: 'browser', roles: ['receptionist'] }, many);
    await read({ sub: 'few', roles: ['receptionist'] }, many.slice(0, BULK_PATIENTS - 1));
    await read({ sub: 'dr-other', roles: ['clinician'] }, ['p-9'], { tenantId: OTHER });
  }, 120_000);

  it('[PRV-001] flags reads outside a treatment relationship, declared emergencies, agents, integrations and bulk reads', async () => {
    // dr-a has an appointment with p-1 (a treatment relationship), none with p-2.
    expect(await flagsBy('dr-a')).toEqual([
      ['p-2', ['outside_treatment']],
      ['p-1', []],
    ]);
    expect(await flagsBy('dr-b')).toEqual([['p-1', ['outside_treatment', 'break_glass']]]);
    // The agent reads on treatment grounds too, without an appointment of its own.
    expect(await flagsBy('bot')).toEqual([['p-1', ['outside_treatment', 'agent']]]);
    const lab = await all({ actor: 'lab-link' });
    expect(lab.map((e) => [e.grounds, e.flags])).toEqual([['treatment', ['outside_treatment', 'agent']]]);
    // A patient's read of their own record is on own-record grounds: nothing to flag.
    expect(await flagsBy('p-1')).toEqual([['p-1', []]]);
    const bulk = await all({ actor: 'browser' });
    expect(bulk).toHaveLength(BULK_PATIENTS);
    expect(bulk.every((e) => e.flags.includes('bulk'))).toBe(true);
    expect((await all({ actor: 'few' })).some((e) => e.flags.includes('bulk'))).toBe(false);
  });

  it('[PRV-001] filters by flag, patient, actor, period, flagged and reviewed', async () => {
    const service = officer();
    expect((await service.list({ flag: 'break_glass' })).data.map((e) => e.actor)).toEqual(['dr-b']);
    expect((await service.list({ flag: 'agent' })).data.map((e) => e.actor).sort()).toEqual(['bot', 'lab-link']);
    expect((await service.list({ flag: 'bulk' })).pagination.total).toBe(BULK_PATIENTS);
    expect((await service.list({ patientId: 'p-1' })).data.map((e) => e.actor).sort()).toEqual(['bot', 'dr-a', 'dr-b', 'lab-link', 'p-1']);
    expect((await service.list({ flagged: false, patientId: 'p-1' })).data.map((e) => e.actor).sort()).toEqual(['dr-a', 'p-1']);
    expect((await service.list({ from: '2000-01-01', to: '2000-01-02' })).pagination.total).toBe(0);
    const today = new Date().toISOString().slice(0, 10);
    expect((await service.list({ from: today, to: today })).pagination.total).toBe(6 + BULK_PATIENTS + BULK_PATIENTS - 1);
    const page = await service.list({}, 5, 5);
    expect([page.data.length, page.pagination]).toEqual([5, { limit: 5, offset: 5, total: 6 + 2 * BULK_PATIENTS - 1 }]);
    await expect(service.list({ flag: 'nope' })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(service.list({ from: '2026-12-02', to: '2026-12-01' })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
  });

  it('[PRV-002] marks entries reviewed in a table of its own with an audit record; the chained log is unchanged and verifies', async () => {
    const service = officer();
    const [entry] = (await service.list({ flag: 'break_glass' })).data;
    const row = () => store({ sub: 'x', roles: ['admin'] }).read((tx) => tx.accessLog.findFirstOrThrow({ where: { id: entry.id } }));
    const before = await row();
    const [review] = await service.markReviewed([entry.id], 'Emergency at the ward; confirmed with dr-b.');
    expect(review).toMatchObject({ entryId: entry.id, reviewedBy: 'privacy@example.com', note: 'Emergency at the ward; confirmed with dr-b.' });
    expect(review.flags).toEqual(['outside_treatment', 'break_glass']);
    expect(await row()).toEqual(before);
    const [listed] = (await service.list({ flag: 'break_glass' })).data;
    expect(listed.review).toMatchObject({ reviewedBy: 'privacy@example.com', flags: ['outside_treatment', 'break_glass'] });
    expect((await service.list({ flag: 'break_glass', reviewed: false })).data).toEqual([]);
    expect((await service.list({ reviewed: true })).data.map((e) => e.id)).toEqual([entry.id]);

    const auditor = new AuditService(store({ sub: 'auditor', roles: ['admin'] }), { chainKey: KEY, checkpoints });
    const trail = await auditor.list({ entityId: entry.id, entityType: 'AccessLog' });
    expect(trail.data.map((r) => [r.action, r.actor, r.reason])).toEqual([['review', 'privacy@example.com', 'Emergency at the ward; confirmed with dr-b.']]);
    expect(trail.data[0].after).toMatchObject({ flags: ['outside_treatment', 'break_glass'] });
    expect((await auditor.verifyAccessLog()).valid).toBe(true);
    expect((await auditor.verify()).valid).toBe(true);

    // A review is final: marking it again is a conflict, and nothing of the batch is marked.
    const [other] = (await service.list({ actor: 'bot' })).data;
    await expect(service.markReviewed([other.id, entry.id])).rejects.toMatchObject({ code: 'CONFLICT' });
    expect((await service.list({ actor: 'bot' })).data[0].review).toBeNull();
    // The runtime role may not alter or remove a review.
    await expect(
      store({ sub: 'x', roles: ['admin'] }).read((tx) => tx.$executeRaw`UPDATE "ehr"."AccessLogReview" SET note = 'changed' WHERE "entryId" = ${entry.id}`),
    ).rejects.toThrow();
    await expect(service.markReviewed([])).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
  });

  it("[PRV-003] one tenant's privacy review sees and marks nothing of another tenant's log", async () => {
    const [foreign] = (await officer(OTHER).list({})).data;
    expect(foreign.actor).toBe('dr-other');
    expect((await officer().list({ actor: 'dr-other' })).data).toEqual([]);
    expect((await officer().list({ patientId: 'p-9' })).pagination.total).toBe(0);
    await expect(officer().markReviewed([foreign.id])).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await officer(OTHER).list({})).data[0].review).toBeNull();
    const report = await officer().report({ from: '2000-01-01', to: '2100-01-01' });
    expect(report.patients).toBe(2 + BULK_PATIENTS);
  });

  it('[PRV-004] only the privacy review capability (admin) reads the review, marks entries and makes the report', async () => {
    for (const roles of [['clinician'], ['receptionist'], ['integration'], ['support']] as const) {
      const s = store({ sub: 'someone', roles: [...roles] });
      const service = new AccessReviewService(s, new ConsentService(s, new AccessPolicyService(s)));
      await expect(service.list({})).rejects.toMatchObject({ code: 'FORBIDDEN' });
      await expect(service.report({ from: '2026-01-01', to: '2026-12-31' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
      await expect(service.consents()).rejects.toMatchObject({ code: 'FORBIDDEN' });
      await expect(new RecordPrivacyService(s, new AccessPolicyService(s)).restrictions()).rejects.toMatchObject({ code: 'FORBIDDEN' });
    }
  });

  it('[PRV-005] the report counts entries per flag, the unreviewed flagged entries and the reviews of the period', async () => {
    const report = await officer().report({ from: '2000-01-01', to: '2100-01-01' });
    const total = 6 + 2 * BULK_PATIENTS - 1;
    expect(report).toMatchObject({ tenantId: TENANT, entries: total, actors: 7, generatedBy: 'privacy@example.com', reviewsDone: 1 });
    expect(report.flags).toEqual([
      // The receptionists' reads on treatment grounds, without appointments, are outside a treatment relationship too.
      { flag: 'outside_treatment', entries: 4 + 2 * BULK_PATIENTS - 1, unreviewed: 3 + 2 * BULK_PATIENTS - 1 },
      { flag: 'break_glass', entries: 1, unreviewed: 0 },
      { flag: 'bulk', entries: BULK_PATIENTS, unreviewed: BULK_PATIENTS },
      { flag: 'agent', entries: 2, unreviewed: 2 },
    ]);
    // Every entry but dr-a's of p-1 and the patient's own is flagged; dr-b's is reviewed.
    expect([report.flagged, report.unreviewedFlagged]).toEqual([total - 2, total - 3]);
    expect(report.unreviewed.every((e) => e.review === null && e.flags.length > 0)).toBe(true);
    expect(report.reviews.map((r) => r.reviewedBy)).toEqual(['privacy@example.com']);
    const empty = await officer().report({ from: '2000-01-01', to: '2000-12-31' });
    expect([empty.entries, empty.flagged, empty.reviewsDone, empty.unreviewed]).toEqual([0, 0, 0, []]);
  });

  it('[PRV-006] lists consents per patient and the records under restriction or legal hold', async () => {
    const s = store({ sub: 'privacy@example.com', roles: ['admin'] });
    const consents = new ConsentService(s, new AccessPolicyService(s));
    await consents.set('p-1', 'research', true, 'signed form', null);
    const service = officer();
    expect((await service.consents()).map((c) => [c.patientId, c.purpose, c.granted])).toEqual([['p-1', 'research', true]]);
    const p1 = await service.consents('p-1');
    expect(p1.map((c) => [c.purpose, c.granted, c.recorded])).toEqual([
      ['messaging', true, false],
      ['data_sharing', false, false],
      ['research', true, true],
      ['ai_assistance', false, false],
    ]);
    await expect(service.consents('p-404')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const privacy = new RecordPrivacyService(s, new AccessPolicyService(s));
    expect(await privacy.restrictions()).toEqual([]);
    await privacy.setLegalHold('p-2', true, 'litigation');
    await privacy.restrict('p-1', 'erasure request by e-mail');
    const listed = await privacy.restrictions();
    expect(
      listed.map((r) => [r.patientId, r.restrictedAt !== null, r.legalHold, r.restrictedBy, r.restrictionReason, r.legalHoldBy, r.legalHoldReason]),
    ).toEqual([
      ['p-1', true, false, 'privacy@example.com', 'erasure request by e-mail', null, null],
      ['p-2', false, true, null, null, 'privacy@example.com', 'litigation'],
    ]);
    // A lifted hold leaves the list; set again, the newest reason is shown.
    await privacy.setLegalHold('p-2', false, 'settled');
    expect((await privacy.restrictions()).map((r) => r.patientId)).toEqual(['p-1']);
    await privacy.setLegalHold('p-2', true, 'new complaint');
    expect((await privacy.restrictions()).find((r) => r.patientId === 'p-2')?.legalHoldReason).toBe('new complaint');
  });
});
