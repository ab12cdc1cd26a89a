import { Prisma } from '../../db/generated/client';

/**
 * SQL on a row `r` of the registry (XdsDocument, XdsSubmissionSet) over its clear columns: the building blocks of
 * the searches the database answers, MHD's (mhd/mhd.search.ts) and the ITI-18 stored queries (xds.service.ts).
 */

export const TRUE = Prisma.sql`TRUE`;
export const FALSE = Prisma.sql`FALSE`;
export const any = (conditions: Prisma.Sql[]) => (conditions.length === 0 ? FALSE : Prisma.sql`(${Prisma.join(conditions, ' OR ')})`);
export const all = (conditions: Prisma.Sql[]) => (conditions.length === 0 ? TRUE : Prisma.sql`(${Prisma.join(conditions, ' AND ')})`);

/** A clear column of `r`. */
export const column = (name: string) => Prisma.raw(`r."${name}"`);

/**
 * Whether a coded column of `r` holds a code meeting one of the conditions made on it (the stored code's JSON):
 * the column holds one code ({code, scheme, display}), or with `list` an array of them (a column without one holds none).
 */
export function holdsCode(name: string, list: boolean, conditions: (code: Prisma.Sql) => Prisma.Sql[]): Prisma.Sql {
  const sql = column(name);
  return list
    ? Prisma.sql`EXISTS (SELECT 1 FROM jsonb_array_elements(CASE jsonb_typeof(${sql}) WHEN 'array' THEN ${sql} ELSE '[]' END) AS e(c) WHERE ${any(conditions(Prisma.sql`e.c`))})`
    : any(conditions(sql));
}

/** A stored code (JSON) with this code and in one of these schemes; either left undefined is not compared. */
export function isCode(code: Prisma.Sql, value: string | undefined, schemes?: string[]): Prisma.Sql {
  return all([
    ...(schemes ? [Prisma.sql`${code}->>'scheme' = ANY(${schemes}::text[])`] : []),
    ...(value === undefined ? [] : [Prisma.sql`${code}->>'code' = ${value}`]),
  ]);
}
