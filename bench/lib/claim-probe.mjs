// campaign-db.mjs --probe-claim: what the delivery claim's update of the `emails` row costs, and what
// it would cost if a claim left `status` alone (issue 26, part 4). Measured mid-campaign, each in its
// own rolled-back transaction on 10 queued rows (the claim's batch): the update as the claim does it
// today, the same update without the status change, and that one again with `emails_claimed` (the
// only index naming `claimed_at`) dropped inside the transaction, so that it can be a HOT update.
// `prepareClaimProbe` runs before the campaign: a HOT update needs room on the row's page, so every
// `emails` partition gets fillfactor 80 for the rows the campaign inserts.

const VARIANTS = [
  {
    label: 'status → SENDING (the claim today)',
    set: `status = 'SENDING', claimed_at = now(), attempts = attempts + 1, updated_at = now()`,
    dropClaimedIndex: false,
  },
  {
    label: 'status unchanged, `emails_claimed` kept',
    set: 'claimed_at = now(), attempts = attempts + 1, updated_at = now()',
    dropClaimedIndex: false,
  },
  {
    label: 'status unchanged, `emails_claimed` dropped (HOT possible)',
    set: 'claimed_at = now(), attempts = attempts + 1, updated_at = now()',
    dropClaimedIndex: true,
  },
];

export async function prepareClaimProbe(db) {
  await db.query(`DO $$ DECLARE r record; BEGIN
      FOR r IN SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
               WHERE i.inhparent = 'emails'::regclass LOOP
        EXECUTE format('ALTER TABLE %I SET (fillfactor = 80)', r.relname);
      END LOOP; END $$`);
}

const updateCounts = async (db) =>
  (
    await db.query(
      `SELECT coalesce(sum(n_tup_upd), 0)::int AS updated, coalesce(sum(n_tup_hot_upd), 0)::int AS hot
       FROM pg_stat_xact_user_tables WHERE relname LIKE 'emails_%'`,
    )
  ).rows[0];

/** Markdown lines: per variant, rows updated, how many HOT, shared buffers and execution time. */
export async function probeClaim(db) {
  const lines = [
    '| claim update of 10 queued rows | HOT | shared buffers | buffers per row | execution ms |',
    '|---|---:|---:|---:|---:|',
  ];
  for (const v of VARIANTS) {
    await db.query('BEGIN');
    try {
      // The newest queued rows: the workers claim from the other end, so nobody waits for these locks.
      const { rows } = await db.query(
        `SELECT id FROM emails WHERE status = 'QUEUED' ORDER BY priority DESC, next_attempt_at DESC LIMIT 10 FOR UPDATE SKIP LOCKED`,
      );
      if (v.dropClaimedIndex) await db.query('DROP INDEX emails_claimed');
      const before = await updateCounts(db);
      const { rows: plan } = await db.query(
        `EXPLAIN (ANALYZE, BUFFERS, COSTS off, FORMAT json) UPDATE emails SET ${v.set} WHERE id = ANY($1::uuid[])`,
        [rows.map((r) => r.id)],
      );
      const after = await updateCounts(db);
      const top = plan[0]['QUERY PLAN'][0];
      const buffers = top.Plan['Shared Hit Blocks'] + top.Plan['Shared Read Blocks'];
      lines.push(
        `| ${v.label} | ${after.hot - before.hot} of ${after.updated - before.updated} | ${buffers} | ` +
          `${(buffers / Math.max(1, rows.length)).toFixed(1)} | ${top['Execution Time'].toFixed(2)} |`,
      );
    } finally {
      await db.query('ROLLBACK');
    }
  }
  return lines;
}
