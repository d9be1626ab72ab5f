import type { WorkflowField as WorkflowFieldSchema } from '@pigeon/contract';
import type { z } from 'zod';
import { queryRows, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import type { FieldKind } from '../conditions/public.js';
import { operatorsOf } from '../conditions/public.js';
import { listFields } from '../contacts/public.js';

/** How many of the trigger event's latest recordings are read to list its data keys. */
const EVENT_SAMPLE = 1000;

type WorkflowField = z.infer<typeof WorkflowFieldSchema>;

const KIND_OF_STANDARD: Record<string, FieldKind> = {
  email: 'email',
  subscribed: 'subscribed',
  createdAt: 'timestamp',
  updatedAt: 'timestamp',
};

const typeOf = (types: string[]) => (types.length === 1 ? (types[0] as string) : 'mixed');

/**
 * GET /workflows/fields: what a CONDITION step can test. Contact fields and data keys (from the
 * field catalog), `event.<key>` for the trigger event's data (from its latest recordings) and the
 * history operators on `event.<name>`; `workflow.<key>` reads a manual start's context.
 */
export async function workflowFields(db: Queryable, projectId: string, eventName: string | undefined) {
  const catalog = await listFields(db, projectId);
  const fields: WorkflowField[] = catalog.fields.map((f) => ({
    field: f.field,
    source: f.field.startsWith('data.') ? 'data' : 'contact',
    type: f.type,
    operators: operatorsOf(KIND_OF_STANDARD[f.field] ?? 'data'),
  }));
  if (eventName) {
    const keys = await queryRows<{ key: string; types: string[] }>(
      db,
      sql`SELECT d.key, array_agg(DISTINCT jsonb_typeof(d.value)) AS types
          FROM (SELECT data FROM events WHERE project_id = ${projectId}::uuid AND name = ${eventName}
                ORDER BY created_at DESC LIMIT ${EVENT_SAMPLE}) e, jsonb_each(e.data) d
          GROUP BY d.key ORDER BY d.key`,
    );
    for (const k of keys) {
      fields.push({ field: `event.${k.key}`, source: 'event', type: typeOf(k.types), operators: operatorsOf('data') });
    }
    fields.push({ field: `event.${eventName}`, source: 'history', type: 'event', operators: operatorsOf('event') });
  }
  return { data: fields };
}
