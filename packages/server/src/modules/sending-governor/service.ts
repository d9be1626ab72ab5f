import type { DomainWarmup, DomainWarmupSettings } from '@pigeon/contract';
import { queryRows, raw, type Sql, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import { capOf, TODAY } from './warmup.js';

interface WarmupRow {
  enabled: boolean;
  start_cap: number;
  target_cap: number;
  ramp_days: number;
  started_on: string;
  day_of_ramp: number;
  cap_today: number | null;
  sent_today: number;
  next_reset_at: Date;
}

const NONE: DomainWarmup = {
  enabled: false,
  startCap: null,
  targetCap: null,
  days: null,
  startedOn: null,
  day: null,
  capToday: null,
  sentToday: 0,
  nextResetAt: null,
};

const toWarmup = (row: WarmupRow | undefined): DomainWarmup =>
  row
    ? {
        enabled: row.enabled,
        startCap: row.start_cap,
        targetCap: row.target_cap,
        days: row.ramp_days,
        startedOn: row.enabled ? row.started_on : null,
        day: row.enabled ? row.day_of_ramp : null,
        capToday: row.cap_today,
        sentToday: row.sent_today,
        nextResetAt: row.enabled ? row.next_reset_at.toISOString() : null,
      }
    : NONE;

/**
 * The warm-up as shown, from `source` (the table, or the row a statement just wrote) named `w`. Its
 * day and its next reset are the database's (UTC), as the counts it shows.
 */
const selectWarmup = (
  source: Sql,
) => sql`SELECT w.enabled, w.start_cap, w.target_cap, w.ramp_days, to_char(w.started_on, 'YYYY-MM-DD') AS started_on,
    (${TODAY} - w.started_on) + 1 AS day_of_ramp, ${capOf(raw('w'))} AS cap_today,
    CASE WHEN w.day = ${TODAY} THEN w.sent_today ELSE 0 END AS sent_today,
    (${TODAY} + 1)::timestamp AT TIME ZONE 'UTC' AS next_reset_at
  FROM ${source} w`;

/** A sender domain's warm-up as `GET /domains/:id` shows it (the domain is the caller's, checked by the caller). */
export async function domainWarmup(db: Queryable, projectId: string, domain: string): Promise<DomainWarmup> {
  const [row] = await queryRows<WarmupRow>(
    db,
    sql`${selectWarmup(raw('sender_warmups'))} WHERE w.project_id = ${projectId}::uuid AND w.domain = ${domain}`,
  );
  return toWarmup(row);
}

/**
 * Sets a sender domain's warm-up. Enabling it (again) starts the ramp today; changing the numbers of
 * a running warm-up keeps its first day; today's count stays.
 */
export async function setDomainWarmup(
  db: Queryable,
  projectId: string,
  input: { domain: string; settings: DomainWarmupSettings },
): Promise<DomainWarmup> {
  const { domain, settings } = input;
  const [row] = await queryRows<WarmupRow>(
    db,
    sql`WITH changed AS (
          INSERT INTO sender_warmups (project_id, domain, enabled, start_cap, target_cap, ramp_days, started_on, day)
          VALUES (${projectId}::uuid, ${domain}, ${settings.enabled}, ${settings.startCap}, ${settings.targetCap},
                  ${settings.days}, ${TODAY}, ${TODAY})
          ON CONFLICT (project_id, domain) DO UPDATE SET enabled = EXCLUDED.enabled, start_cap = EXCLUDED.start_cap,
            target_cap = EXCLUDED.target_cap, ramp_days = EXCLUDED.ramp_days, updated_at = now(),
            started_on = CASE WHEN sender_warmups.enabled THEN sender_warmups.started_on ELSE EXCLUDED.started_on END
          RETURNING *
        ) ${selectWarmup(raw('changed'))}`,
  );
  return toWarmup(row);
}
