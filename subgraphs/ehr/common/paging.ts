import { validationError, type ErrorDetail } from '../../../common/errors';

export interface Paging {
  limit: number;
  offset: number;
}

/** limit 1..100 (default 20), offset ≥ 0 (default 0), as in docs/api.md §5's lists. */
export function parsePaging(limit: number | null | undefined, offset: number | null | undefined): Paging {
  const details: ErrorDetail[] = [];
  if (limit !== null && limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > 100))
    details.push({ path: 'limit', message: 'limit must be 1..100' });
  if (offset !== null && offset !== undefined && (!Number.isInteger(offset) || offset < 0)) details.push({ path: 'offset', message: 'offset must be ≥ 0' });
  if (details.length > 0) throw validationError('Invalid paging', details);
  return { limit: limit ?? 20, offset: offset ?? 0 };
}

export interface Page<T> {
  data: T[];
  pagination: Paging & { total: number };
}
