import { inTransaction } from '../../db/sql.js';
import { recordBatch } from '../background-jobs/repository.js';
import type { JobHandler } from '../background-jobs/runner.js';

const BATCH = 10_000;

/** Deletes every event of one name in batches, each its own transaction; naturally resumable. */
export const deleteEventsByName: JobHandler = async ({ pool, job, heartbeat }) => {
  const name = job.input.name as string;
  const { rows } = await pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM events WHERE project_id = $1 AND name = $2',
    [job.project_id, name],
  );
  await pool.query('UPDATE background_jobs SET total = processed + $2 WHERE id = $1', [job.id, rows[0]?.n ?? 0]);
  for (;;) {
    const deleted = await inTransaction(pool, async (client) => {
      const result = await client.query(
        'DELETE FROM events WHERE id IN (SELECT id FROM events WHERE project_id = $1 AND name = $2 LIMIT $3)',
        [job.project_id, name, BATCH],
      );
      await recordBatch(client, job.id, { processed: result.rowCount ?? 0, updated: result.rowCount ?? 0 });
      return result.rowCount ?? 0;
    });
    if (deleted === 0) return;
    await heartbeat();
  }
};
