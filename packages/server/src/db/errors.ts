import pg from 'pg';

/**
 * Whether an unexpected error certainly left nothing behind: PostgreSQL refused a statement (an
 * error with a SQLSTATE), so that statement and its transaction rolled back. A lost connection
 * (class 08, or terminated by an administrator: 57P) or any other exception leaves the outcome
 * unknown. Read by the Idempotency-Key middleware, which releases the claim only in the first case.
 */
export function certainlyRolledBack(err: unknown): boolean {
  if (!(err instanceof pg.DatabaseError) || typeof err.code !== 'string') return false;
  return !err.code.startsWith('08') && !err.code.startsWith('57P');
}

/**
 * Whether PostgreSQL refused the statement only because of what ran beside it (class 40: a
 * deadlock, a serialization failure): it rolled back, and the same statement run again may well pass.
 */
export function lostToConcurrency(err: unknown): boolean {
  return err instanceof pg.DatabaseError && typeof err.code === 'string' && err.code.startsWith('40');
}
