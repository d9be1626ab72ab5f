import type { FieldType } from '@pigeon/contract';
import { queryRows, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import { findUsages, groupUsages } from '../references/public.js';

const STANDARD_FIELDS = [
  { field: 'email', type: 'string' },
  { field: 'subscribed', type: 'boolean' },
  { field: 'createdAt', type: 'date' },
  { field: 'updatedAt', type: 'date' },
] as const;

export const isStandardField = (field: string) => STANDARD_FIELDS.some((f) => f.field === field);

const ISO_DATE = '^\\d{4}-\\d{2}-\\d{2}([T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|[+-]\\d{2}:?\\d{2})?)?$';

/** Projects up to this size are read whole; larger ones from a page sample of about this many contacts. */
const EXACT_UP_TO = 20_000;

/**
 * Standard fields, then every custom data key with its inferred type and coverage. The total is
 * exact (maintained counts); custom keys of a large project are inferred from a random page
 * sample (TABLESAMPLE SYSTEM, repeatable so the answer is stable) of about EXACT_UP_TO contacts and their counts extrapolated, so
 * the catalog answers in milliseconds at a million contacts. A key held by very few contacts of
 * a large project can be missing from a sample.
 */
export async function listFields(db: Queryable, projectId: string) {
  const total = await contactTotal(db, projectId);
  const sampled = total > EXACT_UP_TO;
  const from = sampled
    ? sql`contacts c TABLESAMPLE SYSTEM (${Math.min(100, (100 * EXACT_UP_TO) / total)}) REPEATABLE (7)`
    : sql`contacts c`;
  const rows = await queryRows<{ key: string; type: string; n: number; dates: number; sample: number }>(
    db,
    sql`WITH picked AS (SELECT c.data FROM ${from} WHERE c.project_id = ${projectId}::uuid)
        SELECT d.key, jsonb_typeof(d.value) AS type, count(*)::int AS n,
               count(*) FILTER (WHERE jsonb_typeof(d.value) = 'string' AND d.value #>> '{}' ~ ${ISO_DATE})::int AS dates,
               (SELECT count(*) FROM picked)::int AS sample
        FROM picked p, jsonb_each(p.data) d GROUP BY 1, 2`,
  );
  const sampleSize = sampled ? (rows[0]?.sample ?? 0) : total;
  const scale = sampled && sampleSize > 0 ? total / sampleSize : 1;
  const byKey = new Map<string, { count: number; types: Set<string>; allDates: boolean }>();
  for (const row of rows) {
    const entry = byKey.get(row.key) ?? { count: 0, types: new Set(), allDates: true };
    entry.count += row.n;
    entry.types.add(row.type);
    if (row.type !== 'string' || row.dates !== row.n) entry.allDates = false;
    byKey.set(row.key, entry);
  }
  const coverage = (count: number) => (total === 0 ? 0 : Math.min(100, Math.round((count / total) * 10000) / 100));
  const custom = [...byKey.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, e]) => ({
      field: `data.${key}`,
      kind: 'custom' as const,
      type: inferType(e.types, e.allDates),
      count: Math.min(total, Math.round(e.count * scale)),
      coverage: coverage(Math.round(e.count * scale)),
    }));
  const standard = STANDARD_FIELDS.map((f) => ({
    ...f,
    kind: 'standard' as const,
    count: total,
    coverage: total ? 100 : 0,
  }));
  return { totalContacts: total, fields: [...standard, ...custom], sampled, sampleSize };
}

/** The project's contacts, from the maintained counts (no scan). */
export async function contactTotal(db: Queryable, projectId: string): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    db,
    sql`SELECT COALESCE(sum(total), 0)::int AS n FROM contact_counts WHERE project_id = ${projectId}::uuid`,
  );
  return row?.n ?? 0;
}

function inferType(types: Set<string>, allDates: boolean): FieldType {
  if (types.size !== 1) return 'mixed';
  const [only] = types;
  if (only === 'string') return allDates ? 'date' : 'string';
  if (only === 'number' || only === 'boolean' || only === 'object' || only === 'array') return only;
  return 'mixed';
}

/** `data.plan` and `plan` both name the custom key `plan`. */
export const customKey = (field: string) => (field.startsWith('data.') ? field.slice(5) : field);

export async function fieldValues(db: Queryable, projectId: string, field: string, limit: number) {
  const key = customKey(field);
  const rows = await queryRows<{ value: unknown; n: number }>(
    db,
    sql`SELECT data -> ${key}::text AS value, count(*)::int AS n FROM contacts
     WHERE project_id = ${projectId} AND data ? ${key} GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT ${limit}`,
  );
  return { field: `data.${key}`, values: rows.map((r) => ({ value: r.value, count: r.n })) };
}

/** Where a field is referenced (segments, templates; campaigns and workflows as they arrive), from the reference index. */
export async function fieldUsage(db: Queryable, projectId: string, field: string) {
  const name = isStandardField(field) ? field : `data.${customKey(field)}`;
  return { field: name, ...groupUsages(await findUsages(db, projectId, { type: 'field', key: name })) };
}
