import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointLog } from './checkpoints';

describe('signed audit checkpoints', () => {
  const dir = mkdtempSync(join(tmpdir(), 'caregraph-checkpoints-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const key = randomBytes(32);

  it('reads back what it signed, per tenant', () => {
    const log = new CheckpointLog(join(dir, 'a.jsonl'), key);
    log.append([{ tenantId: 'demo', seq: 4, hash: 'a'.repeat(64), at: '2026-11-23T00:00:00.000Z' }]);
    log.append([
      { tenantId: 'demo', seq: 9, hash: 'b'.repeat(64), at: '2026-11-23T00:05:00.000Z' },
      { tenantId: 'acme', seq: 2, hash: 'c'.repeat(64), at: '2026-11-23T00:05:00.000Z' },
    ]);
    expect(log.forTenant('demo')).toEqual({ checkpoints: [expect.objectContaining({ seq: 4 }), expect.objectContaining({ seq: 9 })], forged: [] });
    expect(log.forTenant('acme').checkpoints).toEqual([{ tenantId: 'acme', seq: 2, hash: 'c'.repeat(64), at: '2026-11-23T00:05:00.000Z' }]);
    expect(log.forTenant('other')).toEqual({ checkpoints: [], forged: [] });
  });

  it('reports lines that were edited, forged without the key or unreadable', () => {
    const path = join(dir, 'b.jsonl');
    const log = new CheckpointLog(path, key);
    log.append([{ tenantId: 'demo', seq: 4, hash: 'a'.repeat(64), at: '2026-11-23T00:00:00.000Z' }]);
    // Moved back to a lower seq after truncating the table: the signature no longer fits.
    writeFileSync(path, readFileSync(path, 'utf8').replace('"seq":4', '"seq":2'));
    new CheckpointLog(path, randomBytes(32)).append([{ tenantId: 'demo', seq: 3, hash: 'd'.repeat(64), at: '2026-11-23T00:01:00.000Z' }]);
    appendFileSync(path, 'not json\n');
    expect(log.forTenant('demo')).toEqual({ checkpoints: [], forged: [1, 2, 3] });
    expect(log.forTenant('acme').forged).toEqual([3]);
  });
});
