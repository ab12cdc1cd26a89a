import type pg from 'pg';

/** One pg pool's connections, as the metrics report them. */
export interface PoolStats {
  pool: string;
  total: number;
  idle: number;
  waiting: number;
}

export function statsOf(pool: string, p: Pick<pg.Pool, 'totalCount' | 'idleCount' | 'waitingCount'>): PoolStats {
  return { pool, total: p.totalCount, idle: p.idleCount, waiting: p.waitingCount };
}
