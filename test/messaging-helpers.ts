import type { TestPlatform } from './harness';

/** Polls until `check` returns a value (not undefined); the deadline only bounds a broken run. */
export async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Waits until the message has a final status and returns it as GET /v1/messages/{id} shows it. */
export function finalMessage(t: TestPlatform, id: string, token?: string): Promise<any> {
  return eventually(async () => {
    const res = await t.request('GET', `/v1/messages/${id}`, token ? { token } : {});
    return res.body?.status === 'delivered' || res.body?.status === 'failed' ? res.body : undefined;
  }, `message ${id} to finish`);
}

/** Rows of a messaging table, counted straight from the database (to prove nothing was stored). */
export async function countRows(t: TestPlatform, table: string): Promise<number> {
  const { rows } = await t.platform.db!.query<{ n: string }>(`SELECT count(*)::text AS n FROM messaging."${table}"`);
  return Number(rows[0].n);
}
