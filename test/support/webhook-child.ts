import 'reflect-metadata';
import { createInterface } from 'node:readline';
import { startPlatform } from '../../bin/platform';
import { createMessagingPrisma } from '../../subgraphs/messaging/db/client';
import { publishCommitted, recordEvent } from '../../subgraphs/messaging/events/outbox';
import type { WebhookEventType } from '../../common/events/types';

/**
 * A CareGraph process for the webhook restart test: the all-in-one platform,
 * plus a stdin line protocol `{"tenantId","type","data"}` that records an
 * event in the outbox the way a messaging service does. Prints JSON lines.
 */
async function main(): Promise<void> {
  const platform = await startPlatform('all', process.env);
  const prisma = createMessagingPrisma(platform.db!);
  const say = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);
  process.once('SIGTERM', () => {
    prisma.$disconnect().then(() => platform.stop()).then(() => process.exit(0), () => process.exit(1));
  });
  say({ ready: true, url: platform.gateway!.url.replace('localhost', '127.0.0.1'), pid: process.pid });
  for await (const line of createInterface({ input: process.stdin })) {
    if (!line.trim()) continue;
    const { tenantId, type, data } = JSON.parse(line) as { tenantId: string; type: WebhookEventType; data: object };
    const event = await prisma.$transaction((tx) => recordEvent(tx, tenantId, type, data));
    await publishCommitted(platform.runtime.events, [event]);
    say({ event });
  }
}

main().catch((err) => {
  process.stderr.write(`${err?.stack ?? err}\n`);
  process.exit(1);
});
