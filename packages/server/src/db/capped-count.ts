import { LIST_TOTAL_CAP } from '@pigeon/contract';
import { queryRows, type Sql, sql } from './query.js';
import type { Queryable } from './sql.js';

/** A long list's `total` and `totalCapped` (the contract's `cappedTotal`). */
export interface CappedTotal {
  total: number;
  totalCapped: boolean;
}

/** What a page after the first answers: only the first page counts. */
export const LATER_PAGE: CappedTotal = { total: 0, totalCapped: false };

/**
 * The first page's total of a list that grows with the project's history: the rows of `from`
 * matching `where`, counted up to `LIST_TOTAL_CAP` (exact below it, then capped and flagged), so
 * the count reads at most cap + 1 rows whatever the project's size.
 */
export async function countUpToCap(db: Queryable, from: Sql, where: Sql): Promise<CappedTotal> {
  const [row] = await queryRows<{ n: number }>(
    db,
    sql`SELECT count(*)::int AS n FROM (SELECT 1 FROM ${from} WHERE ${where} LIMIT ${LIST_TOTAL_CAP + 1}) m`,
  );
  const n = row?.n ?? 0;
  return n > LIST_TOTAL_CAP ? { total: LIST_TOTAL_CAP, totalCapped: true } : { total: n, totalCapped: false };
}
