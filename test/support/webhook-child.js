// A CareGraph process for the webhook restart test: the compiled all-in-one
// platform (dist/, brought up to date by the e2e globalSetup, so the child
// transpiles nothing), plus a stdin line protocol `{"tenantId","type","data"}`
// that records an event in the outbox the way a messaging service does.
// Prints JSON lines.
'use strict';
require('reflect-metadata');
const path = require('node:path');
const { createInterface } = require('node:readline');

const dist = path.resolve(__dirname, '../../dist');
const { startPlatform } = require(path.join(dist, 'bin/platform.js'));
const { tenantClient } = require(path.join(dist, 'common/db/tenant-session.js'));
const { createMessagingPrisma } = require(path.join(dist, 'subgraphs/messaging/db/client.js'));
const { publishCommitted, recordEvent } = require(path.join(dist, 'subgraphs/messaging/events/outbox.js'));
const { FieldCipher } = require(path.join(dist, 'common/crypto.js'));

async function main() {
  const platform = await startPlatform('all', process.env);
  const prisma = createMessagingPrisma(platform.db);
  const cipher = new FieldCipher(platform.runtime.secrets.encryptionKey);
  const say = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);
  process.once('SIGTERM', () => {
    prisma
      .$disconnect()
      .then(() => platform.stop())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  });
  say({ ready: true, url: platform.gateway.url.replace('localhost', '127.0.0.1'), pid: process.pid });
  for await (const line of createInterface({ input: process.stdin })) {
    if (!line.trim()) continue;
    const { tenantId, type, data } = JSON.parse(line);
    const event = await tenantClient(prisma, tenantId).$transaction((tx) => recordEvent(tx, cipher, tenantId, type, data));
    await publishCommitted(platform.runtime.events, [event]);
    say({ event });
  }
}

main().catch((err) => {
  process.stderr.write(`${(err && err.stack) || err}\n`);
  process.exit(1);
});
