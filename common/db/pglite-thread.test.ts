import { messages } from '@electric-sql/pglite';

import { PGliteThread } from './pglite-thread';

describe('PGliteThread (PGlite on a worker thread)', () => {
  let db: PGliteThread;

  beforeAll(async () => {
    db = await PGliteThread.open('memory://');
    await db.exec('CREATE TABLE item (id int PRIMARY KEY, name text NOT NULL, at timestamptz, doc jsonb)');
  });

  afterAll(async () => {
    await db.close();
  });

  beforeEach(async () => {
    await db.exec('DELETE FROM item');
  });

  it('answers queries with parameters, typed values and affected rows', async () => {
    const inserted = await db.query('INSERT INTO item (id, name, at, doc) VALUES ($1, $2, $3, $4)', [
      1,
      'one',
      new Date('2026-01-02T03:04:05Z'),
      { a: [1, 2] },
    ]);
    expect(inserted.affectedRows).toBe(1);
    const { rows, fields } = await db.query<{ id: number; name: string; at: Date; doc: unknown }>('SELECT * FROM item');
    expect(fields.map((f) => f.name)).toEqual(['id', 'name', 'at', 'doc']);
    expect(rows).toEqual([{ id: 1, name: 'one', at: new Date('2026-01-02T03:04:05Z'), doc: { a: [1, 2] } }]);
  });

  it('runs the given column parsers on the calling thread, in array row mode too', async () => {
    await db.query(`INSERT INTO item (id, name, at) VALUES (1, 'one', '2026-01-02 03:04:05+00')`);
    const seen: Array<[string, number]> = [];
    const parsers = { 1184: (text: string, typeId: number) => (seen.push([text, typeId]), `parsed:${text}`) };
    const { rows } = await db.query('SELECT id, at FROM item', [], { rowMode: 'array', parsers });
    expect(rows).toEqual([[1, 'parsed:2026-01-02 03:04:05+00']]);
    expect(seen).toEqual([['2026-01-02 03:04:05+00', 1184]]);
  });

  it('rebuilds PostgreSQL errors as PGlite DatabaseError with their fields', async () => {
    await db.query(`INSERT INTO item (id, name) VALUES (1, 'one')`);
    const error = await db.query(`INSERT INTO item (id, name) VALUES (1, 'again')`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(messages.DatabaseError);
    expect(error).toMatchObject({ code: '23505', severity: 'ERROR', table: 'item', constraint: 'item_pkey' });
    expect((error as Error).message).toMatch(/duplicate key/);
  });

  it('commits a transaction, and queries outside it wait until it ends', async () => {
    const order: string[] = [];
    let outside: Promise<unknown> = Promise.resolve();
    await db.transaction(async (tx) => {
      await tx.query(`INSERT INTO item (id, name) VALUES (1, 'in tx')`);
      outside = db.query('SELECT count(*)::int AS n FROM item').then((r) => order.push(`outside saw ${r.rows[0].n}`));
      await new Promise((resolve) => setTimeout(resolve, 50));
      order.push('tx ends');
    });
    await outside;
    expect(order).toEqual(['tx ends', 'outside saw 1']);
  });

  it('rolls back when the callback throws, and refuses statements after the end', async () => {
    let kept: Parameters<Parameters<PGliteThread['transaction']>[0]>[0] | undefined;
    await expect(
      db.transaction(async (tx) => {
        kept = tx;
        await tx.query(`INSERT INTO item (id, name) VALUES (1, 'gone')`);
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect((await db.query('SELECT * FROM item')).rows).toEqual([]);
    expect(kept!.closed).toBe(true);
    await expect(kept!.query('SELECT 1')).rejects.toThrow('Transaction is closed');
  });

  it('keeps an explicit rollback (nothing committed after it)', async () => {
    await db.transaction(async (tx) => {
      await tx.query(`INSERT INTO item (id, name) VALUES (1, 'gone')`);
      await tx.rollback();
    });
    expect((await db.query('SELECT * FROM item')).rows).toEqual([]);
  });

  it('returns the results of every statement of a script', async () => {
    const results = await db.exec(`INSERT INTO item (id, name) VALUES (1, 'a'), (2, 'b'); SELECT name FROM item ORDER BY id`);
    expect(results.at(-1)?.rows).toEqual([{ name: 'a' }, { name: 'b' }]);
  });

  it('rejects calls once closed', async () => {
    const other = await PGliteThread.open('memory://');
    await other.close();
    await expect(other.query('SELECT 1')).rejects.toThrow('embedded database closed');
  });
});
