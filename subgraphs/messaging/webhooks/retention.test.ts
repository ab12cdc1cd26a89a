import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { openDatabase, type Database } from '../../../common/db/database';
import { createTestDatabase, type TestDatabase } from '../../../common/db/test-backends';
import { migrate } from '../../../common/db/migrate';
import { tenantClient } from '../../../common/db/tenant-session';
import { createMessagingPrisma, type MessagingPrisma } from '../db/client';
import { systemClock } from '../../../common/clock';
import { createBoss } from '../../../common/db/boss';
import { stopTestBoss } from '../../../common/db/test-backends';
import { createLogger } from '../../../common/logger';
import { scheduleWebhookPurge, WEBHOOK_PURGE_QUEUE, WebhookRetention } from './retention';

const DAY = 86_400_000;

describe('WebhookRetention', () => {
  let testDb: TestDatabase;
  let db: Database;
  let base: MessagingPrisma;
  /** The fixtures' tenant: the runtime role sees rows only with a tenant set. */
  let prisma: MessagingPrisma;
  const dataDir = mkdtempSync(join(tmpdir(), 'caregraph-retention-'));
  const now = new Date('2026-06-01T12:00:00Z');
  const daysAgo = (days: number) => new Date(now.getTime() - days * DAY);

  beforeAll(async () => {
    testDb = await createTestDatabase();
    db = await openDatabase({ databaseUrl: testDb.databaseUrl, dataDir });
    await migrate(db, 'messaging', () => {});
    base = createMessagingPrisma(db);
    prisma = tenantClient(base, 'demo');
    await prisma.webhookSubscription.create({
      data: { tenantId: 'demo', id: 'wh_1', url: 'https://hooks.example/x', events: ['message.sent'], secret: 'ciphertext' },
    });
  });

  afterAll(async () => {
    await base?.$disconnect();
    await db?.close();
    await testDb?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function delivery(id: string, status: string, createdAt: Date, attempts = 1) {
    await prisma.webhookDelivery.create({
      data: {
        tenantId: 'demo',
        id,
        subscriptionId: 'wh_1',
        eventId: `evt_${id}`,
        eventType: 'message.sent',
        payload: '{}',
        status,
        attempts,
        createdAt,
        attemptLog: {
          create: Array.from({ length: attempts }, (_, i) => ({
            tenantId: 'demo',
            id: `att_${id}_${i}`,
            attempt: i + 1,
            at: createdAt,
            durationMs: 5,
            success: status === 'succeeded',
          })),
        },
      },
    });
  }

  it('deletes finished deliveries (with their attempts) and dispatched events past the retention period, nothing else', async () => {
    await delivery('old_ok', 'succeeded', daysAgo(31));
    await delivery('old_failed', 'failed', daysAgo(45), 3);
    await delivery('old_pending', 'pending', daysAgo(60));
    await delivery('recent_ok', 'succeeded', daysAgo(29));
    await prisma.event.createMany({
      data: [
        { tenantId: 'demo', id: 'evt_old_dispatched', type: 'message.sent', data: {}, createdAt: daysAgo(31), dispatchedAt: daysAgo(31) },
        { tenantId: 'demo', id: 'evt_old_undispatched', type: 'message.sent', data: {}, createdAt: daysAgo(31) },
        { tenantId: 'demo', id: 'evt_recent', type: 'message.sent', data: {}, createdAt: daysAgo(1), dispatchedAt: daysAgo(1) },
      ],
    });

    expect(await new WebhookRetention(base, 30).purge(now)).toEqual({ deliveries: 2, events: 1 });

    const deliveries = await prisma.webhookDelivery.findMany({ orderBy: { id: 'asc' } });
    expect(deliveries.map((d) => d.id)).toEqual(['old_pending', 'recent_ok']);
    const attempts = await prisma.webhookAttempt.findMany();
    expect(new Set(attempts.map((a) => a.deliveryId))).toEqual(new Set(['old_pending', 'recent_ok']));
    const events = await prisma.event.findMany({ orderBy: { id: 'asc' } });
    expect(events.map((e) => e.id)).toEqual(['evt_old_undispatched', 'evt_recent']);

    // Nothing left to purge: a second run (or another worker's) deletes nothing.
    expect(await new WebhookRetention(base, 30).purge(now)).toEqual({ deliveries: 0, events: 0 });
  });

  it('works through a backlog larger than one batch', async () => {
    // Batches of 10 and a backlog of 25: two full batches and a partial one. (A backlog past the real
    // batch size took seconds to insert on a loaded machine and ran out Prisma's transaction timeout.)
    await prisma.webhookDelivery.createMany({
      data: Array.from({ length: 25 }, (_, i) => ({
        tenantId: 'demo',
        id: `bulk_${i}`,
        subscriptionId: 'wh_1',
        eventId: `evt_bulk_${i}`,
        eventType: 'message.sent',
        payload: '{}',
        status: 'succeeded',
        createdAt: daysAgo(90),
      })),
    });
    expect(await new WebhookRetention(base, 30, undefined, 10).purge(now)).toEqual({ deliveries: 25, events: 0 });
    expect(await prisma.webhookDelivery.count({ where: { id: { startsWith: 'bulk_' } } })).toBe(0);
  });

  it('runs hourly on the job queue, whose job purges', async () => {
    await delivery('old_for_the_job', 'succeeded', daysAgo(90));
    const boss = await createBoss(db);
    await boss.start();
    const clock = { ...systemClock, now: () => now };
    const worker = await scheduleWebhookPurge(boss, new WebhookRetention(base, 30, clock), createLogger('silent'));
    try {
      expect((await boss.getSchedules()).find((s) => s.name === WEBHOOK_PURGE_QUEUE)).toMatchObject({ cron: '7 * * * *', timezone: 'UTC' });
      const id = (await boss.send(WEBHOOK_PURGE_QUEUE, {}))!;
      for (let job = await boss.getJobById(WEBHOOK_PURGE_QUEUE, id); job?.state !== 'completed'; job = await boss.getJobById(WEBHOOK_PURGE_QUEUE, id)) {
        expect(job?.state).not.toBe('failed');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(await prisma.webhookDelivery.count({ where: { id: 'old_for_the_job' } })).toBe(0);
    } finally {
      await worker.close();
      await stopTestBoss(boss);
    }
  });
});
