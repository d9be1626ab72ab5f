/**
 * History loaded as a restore would load it, for the scenarios that need months of it (`history`,
 * `analytics-10m`): the harness's session runs with `session_replication_role = replica` (no
 * foreign-key checks, no change-feed trigger), the tables' secondary indexes are dropped before and
 * built after (one sort each instead of one insert per row) and analysed, checkpoints are spaced out. All undone
 * before it returns, so nothing measured afterwards runs under these settings. Pigeon keeps
 * running meanwhile: only tables its loops do not read through a secondary index (not `emails`, whose
 * queue index every delivery loop's claim reads each second).
 *
 * Rows written this way never reach the change feed: `ROLLUP_SQL` then counts a project's events
 * into the analytics rollup with the statement its migration backfills with, over the view the
 * feed's consumer reads (`event_count_facts`), so the rollup holds what the consumer would have.
 */
export async function bulkLoad(ctx, tables, load) {
  // Secondary indexes only: primary keys and unique constraints stay (and keep their checks).
  const { rows: indexes } = await ctx.sql(
    `SELECT c.relname AS name, pg_get_indexdef(x.indexrelid) AS def
     FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
     WHERE t.relname = ANY($1::text[]) AND NOT x.indisunique AND NOT x.indisprimary`,
    [tables],
  );
  const steps = {};
  await ctx.sql(`SET maintenance_work_mem = '512MB'`);
  await ctx.sql(`ALTER SYSTEM SET max_wal_size = '8GB'`);
  await ctx.sql('SELECT pg_reload_conf()');
  await ctx.sql('SET session_replication_role = replica');
  try {
    for (const index of indexes) await ctx.sql(`DROP INDEX ${index.name}`);
    steps.load = await seconds(load);
    // A partitioned table's index reads "ON ONLY" (the parent alone, left invalid): built here on
    // every partition, as the migration made it.
    steps.indexes = await seconds(async () => {
      for (const index of indexes) await ctx.sql(index.def.replace(' ON ONLY ', ' ON '));
    });
    const { rows: invalid } = await ctx.sql(
      `SELECT c.relname FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid WHERE NOT x.indisvalid`,
    );
    if (invalid.length) throw new Error(`indexes left invalid: ${invalid.map((r) => r.relname).join(', ')}`);
    // Statistics before anything reads the rows: without them the rollup's statement over 50M
    // events was planned as an index scan in name order with a probe per row.
    steps.analyze = await seconds(() => ctx.sql(`ANALYZE ${tables.join(', ')}`));
  } catch (err) {
    throw new Error(`bulk load of ${tables.join(', ')} failed: ${err.message}`, { cause: err });
  } finally {
    await ctx.sql('RESET session_replication_role').catch(() => {});
    await ctx.sql('RESET maintenance_work_mem').catch(() => {});
    await ctx.sql('ALTER SYSTEM RESET max_wal_size').catch(() => {});
    await ctx.sql('SELECT pg_reload_conf()').catch(() => {});
  }
  return steps;
}

/** `$1`: the project; `$2`: event names not to count (the consumer counts those from the feed). */
export const ROLLUP_SQL = `
  INSERT INTO event_counts (project_id, hour, name, campaign_id, template_id, part, count)
  SELECT project_id, hour, name, campaign_id, template_id, part, count(*)
  FROM event_count_facts WHERE project_id = $1::uuid AND NOT (name = ANY($2::text[]))
  GROUP BY 1, 2, 3, 4, 5, 6
  ON CONFLICT (project_id, hour, name, campaign_id, template_id, part)
  DO UPDATE SET count = event_counts.count + excluded.count`;

async function seconds(fn) {
  const t0 = performance.now();
  await fn();
  return (performance.now() - t0) / 1000;
}
