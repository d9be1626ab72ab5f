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

/** The first scan node of a plan (depth first): which index the claim's scan used. */
const scanOf = (node) =>
  node['Index Name'] ? `${node['Node Type']} on ${node['Index Name']}` : (node.Plans ?? []).map(scanOf).find(Boolean);

/**
 * `--probe-claim-scan`: the claim's scan for 10 due rows (its inner SELECT, as the workers run it),
 * with its row locks and as a plain read, each in its own rolled-back transaction: rows, the scan
 * used, shared buffers and execution time. A gap between the two is what locking costs (rows just
 * claimed or locked by a worker, looked at again); buffers far above the rows in both is the scan's
 * walk over index entries of rows no longer queued.
 */
export async function probeClaimScan(db, when) {
  const lines = [];
  for (const [label, lock] of [
    ['with FOR UPDATE SKIP LOCKED (the claim)', 'FOR UPDATE SKIP LOCKED'],
    ['a plain read', ''],
  ]) {
    await db.query('BEGIN');
    try {
      const { rows: plan } = await db.query(
        `EXPLAIN (ANALYZE, BUFFERS, COSTS off, FORMAT json) SELECT id FROM emails
         WHERE status = 'QUEUED' AND next_attempt_at <= now() ORDER BY priority, next_attempt_at LIMIT 10 ${lock}`,
      );
      const top = plan[0]['QUERY PLAN'][0];
      const buffers = top.Plan['Shared Hit Blocks'] + top.Plan['Shared Read Blocks'];
      lines.push(
        `| ${when} | ${label} | ${top.Plan['Actual Rows']} | ${scanOf(top.Plan) ?? top.Plan['Node Type']} | ${buffers} | ${top['Execution Time'].toFixed(2)} |`,
      );
    } finally {
      await db.query('ROLLBACK');
    }
  }
  return lines;
}

/** The delivery claim's statement (email-states/service.ts `claimEmails`), over every id. */
const CLAIM_STATEMENT = `WITH claimed AS (
  UPDATE emails SET status = 'SENDING', claimed_at = now(), attempts = attempts + 1, updated_at = now()
  WHERE id BETWEEN $1::uuid AND $2::uuid AND id = ANY(ARRAY(
    SELECT id FROM emails WHERE id BETWEEN $1::uuid AND $2::uuid AND status = 'QUEUED' AND next_attempt_at <= now()
    ORDER BY priority, next_attempt_at LIMIT $3::int FOR UPDATE SKIP LOCKED)) RETURNING *)
SELECT e.*, d.dkim_selector, d.dkim_private_key, s.reason AS suppressed
FROM claimed e LEFT JOIN domains d ON d.project_id = e.project_id AND d.domain = split_part(e.from_email, '@', 2)
LEFT JOIN suppressions s ON s.project_id = e.project_id AND s.email = e.to_email
ORDER BY e.priority, e.next_attempt_at`;

/**
 * The whole claim of 10 rows (update and joins), prepared as the workers prepare it, with a custom
 * and with a generic plan (the workers' statement keeps a generic plan at most calls), rolled back.
 */
export async function probeWholeClaim(db, when) {
  const lines = [];
  for (const mode of ['force_custom_plan', 'force_generic_plan']) {
    await db.query('BEGIN');
    try {
      await db.query(`SET LOCAL plan_cache_mode = ${mode}`);
      await db.query('PREPARE probe_claim(uuid, uuid, int) AS ' + CLAIM_STATEMENT);
      const { rows: plan } = await db.query(
        `EXPLAIN (ANALYZE, BUFFERS, COSTS off, FORMAT json) EXECUTE probe_claim('00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff', 10)`,
      );
      const top = plan[0]['QUERY PLAN'][0];
      const buffers = top.Plan['Shared Hit Blocks'] + top.Plan['Shared Read Blocks'];
      lines.push(
        `| ${when} | the whole claim, ${mode.replace('force_', '').replaceAll('_', ' ')} | ${top.Plan['Actual Rows']} | – | ${buffers} | ${top['Execution Time'].toFixed(2)} |`,
      );
    } finally {
      await db.query('ROLLBACK');
      await db.query('DEALLOCATE ALL');
    }
  }
  return lines;
}
