import type { Queryable } from '../../db/sql.js';

const STANDARD_FIELDS = [
  { field: 'email', type: 'string' },
  { field: 'subscribed', type: 'boolean' },
  { field: 'createdAt', type: 'date' },
  { field: 'updatedAt', type: 'date' },
] as const;

type FieldType = 'string' | 'number' | 'boolean' | 'date' | 'object' | 'array' | 'mixed';

const ISO_DATE = '^\\d{4}-\\d{2}-\\d{2}([T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?(Z|[+-]\\d{2}:?\\d{2})?)?$';

/** Standard fields, then every custom data key with its inferred type and coverage. */
export async function listFields(db: Queryable, projectId: string) {
  const { rows: totals } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM contacts WHERE project_id = $1',
    [projectId],
  );
  const total = totals[0]?.n ?? 0;
  const { rows } = await db.query<{ key: string; type: string; n: number; dates: number }>(
    `SELECT d.key, jsonb_typeof(d.value) AS type, count(*)::int AS n,
            count(*) FILTER (WHERE jsonb_typeof(d.value) = 'string' AND d.value #>> '{}' ~ $2)::int AS dates
     FROM contacts c, jsonb_each(c.data) d WHERE c.project_id = $1 GROUP BY 1, 2`,
    [projectId, ISO_DATE],
  );
  const byKey = new Map<string, { count: number; types: Set<string>; allDates: boolean }>();
  for (const row of rows) {
    const entry = byKey.get(row.key) ?? { count: 0, types: new Set(), allDates: true };
    entry.count += row.n;
    entry.types.add(row.type);
    if (row.type !== 'string' || row.dates !== row.n) entry.allDates = false;
    byKey.set(row.key, entry);
  }
  const coverage = (count: number) => (total === 0 ? 0 : Math.round((count / total) * 10000) / 100);
  const custom = [...byKey.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, e]) => ({
      field: `data.${key}`,
      kind: 'custom' as const,
      type: inferType(e.types, e.allDates),
      count: e.count,
      coverage: coverage(e.count),
    }));
  const standard = STANDARD_FIELDS.map((f) => ({
    ...f,
    kind: 'standard' as const,
    count: total,
    coverage: total ? 100 : 0,
  }));
  return { totalContacts: total, fields: [...standard, ...custom] };
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
  const { rows } = await db.query<{ value: unknown; n: number }>(
    `SELECT data -> $2 AS value, count(*)::int AS n FROM contacts
     WHERE project_id = $1 AND data ? $2 GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT $3`,
    [projectId, key, limit],
  );
  return { field: `data.${key}`, values: rows.map((r) => ({ value: r.value, count: r.n })) };
}

/**
 * Where a custom field is referenced. Segments, campaigns, workflows and templates do not
 * exist yet in this build, so the lists are empty; each module adds its lookup here.
 */
export async function fieldUsage(_db: Queryable, _projectId: string, field: string) {
  return { field: `data.${customKey(field)}`, segments: [], campaigns: [], workflows: [], templates: [] };
}
