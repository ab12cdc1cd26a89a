import { AppError } from '../errors';

/** A unique-constraint violation from Prisma (P2002), e.g. two writers racing for the same id. */
export function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: string }).code === 'P2002';
}

export function conflictOnDuplicate(err: unknown, message: string): never {
  if (isUniqueViolation(err)) throw new AppError('CONFLICT', message);
  throw err;
}
