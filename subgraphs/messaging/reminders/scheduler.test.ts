import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type PgBoss from 'pg-boss';

import { systemClock } from '../../../common/clock';
import { RATE_LIMIT_CATEGORIES } from '../../../common/config';
import { AppError } from '../../../common/errors';
import { InProcessEventBus } from '../../../common/events/bus';
import { createBoss } from '../../../common/db/boss';
import { openDatabase, type Database } from '../../../common/db/database';
import { migrate } from '../../../common/db/migrate';
import { createTestDatabase, stopTestBoss, type TestDatabase } from '../../../common/db/test-backends';
import { inTenant, tenantClient } from '../../../common/db/tenant-session';
import { createMessagingPrisma, type MessagingPrisma } from '../db/client';
import { ensureQueues, REMINDER_QUEUE, type ReminderJob } from '../delivery/jobs';
import type { MessageServiceDeps } from '../messages/message.service';
import { OrganizationService } from '../organizations/organization.service';
import { ReminderSettingsService } from './reminder-settings.service';
import { scheduleReminders } from './schedule';
import { sendDueReminder } from './sender';

const TENANT = 'demo';
const DAY = 1440;
const now = new Date('2026-12-01T08:00:00Z');
const clock = { ...systemClock, now: () => now };

/** The scheduler on a real database (PGlite, or PostgreSQL with TEST_DATABASE_URL): rows and jobs per lead time. */
describe(`reminder cadences (${process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite'})`, () => {
  let testDb: TestDatabase;
  let db: Database;
  let base: MessagingPrisma;
  let prisma: MessagingPrisma;
  let boss: PgBoss;
  const dataDir = mkdtempSync(join(tmpdir(), 'caregraph-cadence-'));

  beforeAll(async () => {
    testDb = await createTestDatabase();
    db = await openDatabase({ databaseUrl: testDb.databaseUrl, dataDir });
    await migrate(db, 'messaging', () => {});
    base = createMessagingPrisma(db);
    prisma = tenantClient(base, TENANT);
    boss = await createBoss(db);
    await boss.start();
    await ensureQueues(boss, 60);
    await setCadence({ reminderLeadTimes: [120, 7 * DAY, DAY] });
    // p-2 keeps quiet hours 22:00–07:00 in Amsterdam.
    await prisma.communicationPreference.create({
      data: { tenantId: TENANT, patientId: 'p-2', quietStart: '22:00', quietEnd: '07:00', quietZone: 'Europe/Amsterdam' },
    });
  });

  afterAll(async () => {
    if (boss) await stopTestBoss(boss);
    await base?.$disconnect();
    await db?.close();
    await testDb?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function setCadence(settings: object) {
    await base.organization.upsert({ where: { id: TENANT }, create: { id: TENANT, name: 'Demo', settings }, update: { settings } });
  }

  const relay = (...events: Array<{ type: string; data: Record<string, unknown> }>) =>
    inTenant(base, TENANT, (tx) => scheduleReminders(tx, boss, TENANT, events, clock));
  const booked = (appointmentId: string, start: string, patientId = 'p-1') => ({ type: 'appointment.booked', data: { appointmentId, patientId, start } });

  async function rows(appointmentId: string) {
    const found = await prisma.appointmentReminder.findMany({ where: { appointmentId }, orderBy: { leadMinutes: 'desc' } });
    return found.map((r) => ({ leadMinutes: r.leadMinutes, start: r.start.toISOString(), dueAt: r.dueAt.toISOString(), status: r.status, note: r.note }));
  }

  async function jobs(appointmentId: string): Promise<ReminderJob[]> {
    const { rows: found } = await db.query<{ data: ReminderJob }>(`SELECT data FROM pgboss.job WHERE name = $1 AND data->>'appointmentId' = $2`, [
      REMINDER_QUEUE,
      appointmentId,
    ]);
    return found.map(({ data: { tenantId, appointmentId: id, start, leadMinutes } }) => ({ tenantId, appointmentId: id, start, leadMinutes }));
  }

  // Only the early answers of the sender are reached here (the row has moved on), which read nothing but the database.
  const send = (job: ReminderJob) => sendDueReminder({ prisma: base } as MessageServiceDeps, job);

  it('[MSG-019] schedules one reminder and one job per lead time, longest first', async () => {
    await relay(booked('a-1', '2026-12-10T10:00:00.000Z'));
    expect(await rows('a-1')).toEqual([
      { leadMinutes: 7 * DAY, start: '2026-12-10T10:00:00.000Z', dueAt: '2026-12-03T10:00:00.000Z', status: 'scheduled', note: null },
      { leadMinutes: DAY, start: '2026-12-10T10:00:00.000Z', dueAt: '2026-12-09T10:00:00.000Z', status: 'scheduled', note: null },
      { leadMinutes: 120, start: '2026-12-10T10:00:00.000Z', dueAt: '2026-12-10T08:00:00.000Z', status: 'scheduled', note: null },
    ]);
    expect((await jobs('a-1')).map((j) => j.leadMinutes).sort((a, b) => b! - a!)).toEqual([7 * DAY, DAY, 120]);
  });

  it('leaves out lead times already passed, and reminds at once when all have', async () => {
    await relay(booked('a-2', '2026-12-04T08:00:00.000Z'), booked('a-3', '2026-12-01T09:00:00.000Z'));
    expect((await rows('a-2')).map((r) => r.leadMinutes)).toEqual([DAY, 120]);
    expect(await rows('a-3')).toEqual([{ leadMinutes: 120, start: '2026-12-01T09:00:00.000Z', dueAt: now.toISOString(), status: 'scheduled', note: null }]);
  });

  it('[MSG-019] keeps every reminder out of quiet hours, at the last moment before them', async () => {
    // 07:30 Amsterdam: the 2-hour reminder (05:30) is quiet and goes at 21:55 the evening before.
    await relay(booked('a-4', '2026-12-10T06:30:00.000Z', 'p-2'));
    expect((await rows('a-4')).map((r) => [r.leadMinutes, r.dueAt])).toEqual([
      [7 * DAY, '2026-12-03T06:30:00.000Z'],
      [DAY, '2026-12-09T06:30:00.000Z'],
      [120, '2026-12-09T20:55:00.000Z'],
    ]);
  });

  it('[MSG-019] skips the later reminders once the patient confirmed, and their jobs send nothing', async () => {
    await relay(booked('a-5', '2026-12-10T10:00:00.000Z'));
    await prisma.appointmentReminder.update({
      where: { tenantId_appointmentId_leadMinutes: { tenantId: TENANT, appointmentId: 'a-5', leadMinutes: 7 * DAY } },
      data: { status: 'sent' },
    });
    await relay({ type: 'appointment.confirmed', data: { appointmentId: 'a-5', patientId: 'p-1', start: '2026-12-10T10:00:00.000Z' } });
    expect((await rows('a-5')).map((r) => [r.leadMinutes, r.status, r.note])).toEqual([
      [7 * DAY, 'sent', null],
      [DAY, 'skipped', 'appointment confirmed'],
      [120, 'skipped', 'appointment confirmed'],
    ]);
    for (const job of (await jobs('a-5')).filter((j) => j.leadMinutes !== 7 * DAY)) expect(await send(job)).toBe('skipped');
  });

  it('[MSG-019] cancels the reminders still to come when the appointment is cancelled', async () => {
    await relay(booked('a-6', '2026-12-10T10:00:00.000Z'));
    await relay({ type: 'appointment.cancelled', data: { appointmentId: 'a-6', patientId: 'p-1', start: '2026-12-10T10:00:00.000Z' } });
    expect((await rows('a-6')).map((r) => r.status)).toEqual(['cancelled', 'cancelled', 'cancelled']);
    for (const job of await jobs('a-6')) expect(await send(job)).toBe('cancelled');
  });

  it('[MSG-019] moves the reminders on a reschedule, cancelling the ones the new start leaves no room for; old jobs send nothing', async () => {
    await relay(booked('a-7', '2026-12-10T10:00:00.000Z'));
    const old = await jobs('a-7');
    await relay({ type: 'appointment.rescheduled', data: { appointmentId: 'a-7', patientId: 'p-1', start: '2026-12-05T10:00:00.000Z' } });
    expect(await rows('a-7')).toEqual([
      { leadMinutes: 7 * DAY, start: '2026-12-10T10:00:00.000Z', dueAt: '2026-12-03T10:00:00.000Z', status: 'cancelled', note: 'rescheduled' },
      { leadMinutes: DAY, start: '2026-12-05T10:00:00.000Z', dueAt: '2026-12-04T10:00:00.000Z', status: 'scheduled', note: null },
      { leadMinutes: 120, start: '2026-12-05T10:00:00.000Z', dueAt: '2026-12-05T08:00:00.000Z', status: 'scheduled', note: null },
    ]);
    for (const job of old.filter((j) => j.leadMinutes !== 7 * DAY)) expect(await send(job)).toBe('gone');
    expect(await send(old.find((j) => j.leadMinutes === 7 * DAY)!)).toBe('cancelled');
  });

  it('keeps a single lead time working as before, and finds the row of a job queued before cadences', async () => {
    await setCadence({ reminderLeadMinutes: 60 });
    await relay(booked('a-8', '2026-12-02T10:00:00.000Z'));
    expect((await rows('a-8')).map((r) => [r.leadMinutes, r.dueAt])).toEqual([[60, '2026-12-02T09:00:00.000Z']]);
    await setCadence({});
    await relay(booked('a-9', '2026-12-03T10:00:00.000Z'));
    expect((await rows('a-9')).map((r) => [r.leadMinutes, r.dueAt])).toEqual([[DAY, '2026-12-02T10:00:00.000Z']]);
    await relay({ type: 'appointment.cancelled', data: { appointmentId: 'a-9', patientId: 'p-1', start: '2026-12-03T10:00:00.000Z' } });
    expect(await send({ tenantId: TENANT, appointmentId: 'a-9', start: '2026-12-03T10:00:00.000Z' })).toBe('cancelled');
  });

  it('sets a cadence or a single lead time through the reminder settings, each replacing the other, and refuses bad ones', async () => {
    const organizations = new OrganizationService(
      { prisma: base, events: new InProcessEventBus(), rateLimits: RATE_LIMIT_CATEGORIES },
      { sub: 'admin-1', tenantId: TENANT, roles: ['admin'] },
    );
    const settings = new ReminderSettingsService(organizations);
    expect(await settings.setLeadTimes([120, 7 * DAY, DAY], 'a week, a day and two hours')).toEqual({ leadMinutes: 7 * DAY, leadTimes: [7 * DAY, DAY, 120] });
    const stored = async () => (await base.organization.findUniqueOrThrow({ where: { id: TENANT } })).settings;
    expect(await stored()).toMatchObject({ reminderLeadTimes: [120, 7 * DAY, DAY] });
    expect(await base.organizationChange.findFirst({ where: { organizationId: TENANT }, orderBy: { at: 'desc' } })).toMatchObject({
      action: 'update',
      reason: 'a week, a day and two hours',
    });
    for (const [bad, path] of [
      [[], 'reminderLeadTimes'],
      [[60, 60], 'reminderLeadTimes'],
      [[60, 20_161], 'reminderLeadTimes.1'],
      [Array.from({ length: 11 }, (_, i) => i), 'reminderLeadTimes'],
    ] as const) {
      const refused = await settings.setLeadTimes([...bad]).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(AppError);
      expect(refused).toMatchObject({ code: 'VALIDATION_ERROR', details: [expect.objectContaining({ path })] });
    }
    expect(await settings.get()).toEqual({ leadMinutes: 7 * DAY, leadTimes: [7 * DAY, DAY, 120] });
    expect(await settings.setLeadMinutes(90)).toEqual({ leadMinutes: 90, leadTimes: [90] });
    expect(await stored()).not.toHaveProperty('reminderLeadTimes');
    expect(await settings.setLeadTimes([DAY, 60])).toEqual({ leadMinutes: DAY, leadTimes: [DAY, 60] });
    expect(await stored()).not.toHaveProperty('reminderLeadMinutes');
  });
});
