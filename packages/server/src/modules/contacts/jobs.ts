import { queryRows, sql } from '../../db/query.js';
import { inTransaction } from '../../db/sql.js';
import {
  changeInBatches,
  type JobError,
  type JobHandler,
  PermanentJobError,
  recordBatch,
  setJobTotal,
} from '../background-jobs/public.js';
import { insertSubscriptionEvents } from '../event-log/public.js';

const IMPORT_BATCH = 2000;

/**
 * One batch of imported rows in one statement: existing contacts get the new data merged and
 * `subscribed` set when the row gives it (recording the change), new ones are inserted.
 */
const importBatch = (projectId: string, input: string) => sql`
  WITH input AS (
    SELECT * FROM jsonb_to_recordset(${input}::jsonb) AS r(email text, subscribed boolean, data jsonb)
  ), existing AS (
    SELECT c.id, c.email, c.subscribed AS old_subscribed FROM contacts c JOIN input i ON i.email = c.email
    WHERE c.project_id = ${projectId} FOR NO KEY UPDATE OF c
  ), updated AS (
    UPDATE contacts c SET data = c.data || i.data, subscribed = coalesce(i.subscribed, c.subscribed), updated_at = now()
    FROM input i, existing e WHERE c.id = e.id AND i.email = e.email AND pigeon_contact_data_ok(c.data || i.data)
    RETURNING c.id, c.project_id, c.subscribed, e.old_subscribed
  ), inserted AS (
    INSERT INTO contacts (id, project_id, email, subscribed, data)
    SELECT uuidv7_compat(), ${projectId}::uuid, i.email, coalesce(i.subscribed, true), i.data FROM input i
    WHERE NOT EXISTS (SELECT 1 FROM existing e WHERE e.email = i.email) AND pigeon_contact_data_ok(i.data)
    ON CONFLICT (project_id, email) DO NOTHING
    RETURNING id
  ), changed AS (
    SELECT id, project_id, subscribed FROM updated WHERE old_subscribed IS DISTINCT FROM subscribed
  ), subscription_events AS (${insertSubscriptionEvents('changed', 'import')})
  SELECT (SELECT count(*) FROM inserted)::int AS created, (SELECT count(*) FROM updated)::int AS updated`;

const encodingNote = (encoding: string) =>
  encoding === 'windows-1252'
    ? 'The file is not UTF-8: it was read as Windows-1252 (Latin-1), the encoding of spreadsheet exports'
    : `The file was read as ${encoding.toUpperCase()} (from its byte order mark)`;

export const importContacts: JobHandler = async ({ pool, job, heartbeat }) => {
  if (!job.file) throw new PermanentJobError('The uploaded file is no longer available');
  const parsed = (await import('./csv.js')).parseContactsCsv(job.file);
  if ('fatal' in parsed) throw new PermanentJobError(parsed.fatal);
  const { rows, encoding } = parsed;
  const errors = encoding === 'utf-8' ? parsed.errors : [...parsed.errors, { reason: encodingNote(encoding) }];
  if (job.processed === 0) {
    // First run: the total and the parse errors are recorded once, before any batch.
    await inTransaction(pool, async (client) => {
      await setJobTotal(client, job.id, rows.length + errors.length);
      await recordBatch(client, job.id, { processed: errors.length, skipped: errors.length, errors });
    });
  }
  const done = Math.max(0, job.processed - (job.processed === 0 ? 0 : errors.length));
  for (let start = done; start < rows.length; start += IMPORT_BATCH) {
    const batch = rows.slice(start, start + IMPORT_BATCH);
    await inTransaction(pool, async (client) => {
      const input = batch.map((r) => ({ email: r.email, subscribed: r.subscribed, data: r.data }));
      const counts = await queryRows<{ created: number; updated: number }>(
        client,
        importBatch(job.project_id, JSON.stringify(input)),
      );
      const created = counts[0]?.created ?? 0;
      const updated = counts[0]?.updated ?? 0;
      const raced = batch.length - created - updated;
      await recordBatch(client, job.id, {
        processed: batch.length,
        created,
        updated,
        skipped: raced,
        errors:
          raced > 0
            ? [
                {
                  reason: `${raced} rows were skipped: their contact's data would exceed 200 keys or 64 KB, or they changed concurrently (import them again)`,
                },
              ]
            : [],
      });
    });
    await heartbeat();
  }
};

async function forEachContactId(job: Parameters<JobHandler>[0]['job'], apply: (ids: string[]) => Promise<void>) {
  const ids = (job.input.contactIds as string[]).slice(job.processed);
  if (ids.length > 0) await apply(ids);
}

const setSubscribed =
  (subscribed: boolean): JobHandler =>
  async ({ pool, job }) => {
    await setJobTotal(pool, job.id, (job.input.contactIds as string[]).length);
    await forEachContactId(job, (ids) =>
      inTransaction(pool, async (client) => {
        const rows = await queryRows<{ id: string; changed: boolean }>(
          client,
          sql`WITH target AS (
                SELECT id, subscribed FROM contacts WHERE project_id = ${job.project_id} AND id = ANY(${ids}::uuid[])
                FOR NO KEY UPDATE
              ), changed AS (
                UPDATE contacts c SET subscribed = ${subscribed}, updated_at = now() FROM target t
                WHERE c.id = t.id AND t.subscribed <> ${subscribed} RETURNING c.id, c.project_id, c.subscribed
              ), subscription_events AS (${insertSubscriptionEvents('changed', 'bulk')})
              SELECT t.id, (t.subscribed <> ${subscribed}) AS changed FROM target t`,
        );
        await recordBatch(client, job.id, outcome(ids, rows));
      }),
    );
  };

const deleteContacts: JobHandler = async ({ pool, job }) => {
  await setJobTotal(pool, job.id, (job.input.contactIds as string[]).length);
  await forEachContactId(job, (ids) =>
    inTransaction(pool, async (client) => {
      const rows = await queryRows<{ id: string }>(
        client,
        sql`DELETE FROM contacts WHERE project_id = ${job.project_id} AND id = ANY(${ids}::uuid[]) RETURNING id`,
      );
      await recordBatch(
        client,
        job.id,
        outcome(
          ids,
          rows.map((r) => ({ id: r.id, changed: true })),
        ),
      );
    }),
  );
};

/** Counts for a list of ids: changed ones are updated, unchanged skipped, unknown ones errors. */
function outcome(ids: string[], rows: Array<{ id: string; changed: boolean }>) {
  const seen = new Map(rows.map((r) => [r.id, r.changed]));
  const errors: JobError[] = ids
    .filter((id) => !seen.has(id))
    .map((id) => ({ contactId: id, reason: 'contact not found' }));
  const updated = rows.filter((r) => r.changed).length;
  return { processed: ids.length, updated, skipped: ids.length - updated, errors };
}

/** Removes a data key from every contact in committed batches; naturally resumable. */
const deleteField: JobHandler = (ctx) => {
  const project = ctx.job.project_id;
  const key = ctx.job.input.key as string;
  return changeInBatches(
    ctx,
    {
      count: sql`SELECT count(*)::int AS n FROM contacts WHERE project_id = ${project} AND data ? ${key}`,
      batch: (size) => sql`UPDATE contacts SET data = data - ${key}::text, updated_at = now()
                           WHERE id IN (SELECT id FROM contacts WHERE project_id = ${project} AND data ? ${key} LIMIT ${size})`,
    },
    5000,
  );
};

export const contactJobHandlers = {
  import: importContacts,
  bulk_subscribe: setSubscribed(true),
  bulk_unsubscribe: setSubscribed(false),
  bulk_delete: deleteContacts,
  delete_field: deleteField,
} satisfies Record<string, JobHandler>;
