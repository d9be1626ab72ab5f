import type pg from 'pg';
import { oneInFlight } from '../../db/one-in-flight.js';
import { queryRows, raw, type Sql, sql } from '../../db/query.js';

/** Today as PostgreSQL counts it: warm-up days are UTC days. */
export const TODAY = raw(`(now() AT TIME ZONE 'UTC')::date`);

/**
 * The cap of `w`'s day: `start_cap` on the first, growing by one factor a day to `target_cap` on the
 * last (`ramp_days`), NULL once the ramp is over (or when the warm-up is off): nothing is held then.
 */
export const capOf = (
  w: Sql,
) => sql`CASE WHEN NOT ${w}.enabled OR ${TODAY} - ${w}.started_on >= ${w}.ramp_days THEN NULL
  ELSE round(${w}.start_cap * power(${w}.target_cap::float8 / ${w}.start_cap,
    (${TODAY} - ${w}.started_on)::float8 / GREATEST(${w}.ramp_days - 1, 1)))::int END`;

/** The next midnight UTC after `now`: when a day's cap resets. */
export function nextDayStart(now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
}

interface Ask {
  projectId: string;
  domain: string;
  /** Campaign and workflow mail: held over the cap. Other mail is counted, never held. */
  holdable: boolean;
}

/** `go`, `later` (the cap is reached: the next day), or `none`: the domain is not warming up. */
export type WarmupAnswer = 'go' | 'later' | 'none';

/** A domain not warming up is asked about again after this (a warm-up just enabled takes effect within it). */
const NOT_WARMING_KEEP_MS = 10_000;

/**
 * The warm-up's share of admission, per process. A domain not warming up costs a map lookup (and a
 * statement every 10 s); a domain warming up counts every message in `sender_warmups` (one grouped
 * statement in flight per process, so the count is exact across processes and the cap is never
 * passed), a small cost bounded by the caps themselves.
 */
export function warmupCounter(pool: pg.Pool) {
  const notWarming = new Map<string, number>();
  const reserve = oneInFlight(async (asks: Ask[]) => {
    const keys = [...new Map(asks.map((a) => [`${a.projectId} ${a.domain}`, a])).values()];
    const holdable = keys.map((k) => asks.filter((a) => same(a, k) && a.holdable).length);
    const counted = keys.map((k) => asks.filter((a) => same(a, k) && !a.holdable).length);
    const rows = await queryRows<{ project_id: string; domain: string; granted: number; cap: number | null }>(
      pool,
      sql`WITH asked AS (
            SELECT * FROM unnest(${keys.map((k) => k.projectId)}::uuid[], ${keys.map((k) => k.domain)}::text[],
              ${holdable}::int[], ${counted}::int[]) AS a(project_id, domain, holdable, counted)
          ), cur AS (
            SELECT w.project_id, w.domain, CASE WHEN w.day = ${TODAY} THEN w.sent_today ELSE 0 END AS base, ${capOf(raw('w'))} AS cap
            FROM sender_warmups w JOIN asked a ON a.project_id = w.project_id AND a.domain = w.domain
            WHERE w.enabled FOR UPDATE OF w
          ), granted AS (
            SELECT c.project_id, c.domain, c.base, c.cap, a.counted,
              CASE WHEN c.cap IS NULL THEN a.holdable ELSE LEAST(a.holdable, GREATEST(0, c.cap - c.base - a.counted)) END AS granted
            FROM cur c JOIN asked a ON a.project_id = c.project_id AND a.domain = c.domain
          ), counted AS (
            UPDATE sender_warmups w SET day = ${TODAY}, sent_today = g.base + g.counted + g.granted, updated_at = now()
            FROM granted g WHERE w.project_id = g.project_id AND w.domain = g.domain AND g.cap IS NOT NULL
          )
          SELECT project_id, domain, granted, cap FROM granted`,
    );
    const left = new Map(rows.map((r) => [`${r.project_id} ${r.domain}`, r]));
    return asks.map((a): WarmupAnswer => {
      const row = left.get(`${a.projectId} ${a.domain}`);
      if (!row || row.cap === null) {
        notWarming.set(`${a.projectId} ${a.domain}`, Date.now() + NOT_WARMING_KEEP_MS);
        return 'none';
      }
      if (!a.holdable) return 'go';
      if (row.granted <= 0) return 'later';
      row.granted--;
      return 'go';
    });
  });
  return {
    admit(ask: Ask): WarmupAnswer | Promise<WarmupAnswer> {
      const until = notWarming.get(`${ask.projectId} ${ask.domain}`);
      if (until !== undefined && until > Date.now()) return 'none';
      return reserve(ask);
    },
  };
}

const same = (a: Ask, b: Ask) => a.projectId === b.projectId && a.domain === b.domain;
