// The partitioned-history conversion on a populated database: how long the schema swap and the
// move of the rows into monthly partitions take per million rows.
//   DATABASE_URL=postgres://…/empty_db node bench/history-convert.mjs [events=1000000] [emails=100000] [batch=10000]
// DATABASE_URL names an empty database on a PostgreSQL you run (it is filled and left converted).
// Needs the built server (`pnpm build`). Seeds the schema as it was before the conversion (every
// migration up to Migration20261206010000_send_options), `events` and `emails` over 365 days with
// link clicks and suppressions, then applies the conversion migration and moves the rows with the
// default batch (10,000 rows a transaction), as `pigeon migrate` and every start do.
import { createRequire } from 'node:module';
import { moveUnpartitionedHistory, runMigrations, seedHistory } from '../packages/server/dist/bench.js';

const pg = createRequire(new URL('../packages/server/package.json', import.meta.url))('pg');
const url = process.env.DATABASE_URL;
if (!url) throw new Error('DATABASE_URL (an empty database) is required');
const events = Number(process.argv[2] ?? 1_000_000);
const emails = Number(process.argv[3] ?? 100_000);
const batch = Number(process.argv[4] ?? 10_000);
const project = '01900000-0000-7000-8000-00000000b001';
const logger = { info() {}, warn() {}, error() {}, debug() {}, trace() {}, fatal() {}, child: () => logger };

const timed = async (fn) => {
  const t0 = performance.now();
  await fn();
  return (performance.now() - t0) / 1000;
};

await runMigrations(url, logger, { to: 'Migration20261206010000_send_options' });
const pool = new pg.Pool({ connectionString: url, max: 2 });
await pool.query(
  `INSERT INTO projects (id, name, public_key, secret_key, public_key_hash, secret_key_hash)
   VALUES ($1, 'history-convert', 'pk-hc', 'sk-hc', 'pkh-hc', 'skh-hc')`,
  [project],
);
const seed = await timed(() => seedHistory(pool, { projectId: project, contacts: 10_000, emails, events, days: 365 }));
await pool.query('VACUUM ANALYZE');
const swap = await timed(() => runMigrations(url, logger));
const move = await timed(() => moveUnpartitionedHistory(pool, { batch }));
const { rows } = await pool.query(
  `SELECT (SELECT count(*) FROM events)::int AS events, (SELECT count(*) FROM emails)::int AS emails,
          (SELECT count(*) FROM pg_inherits WHERE inhparent = 'events'::regclass)::int AS partitions`,
);
await pool.end();
const rowsMoved = rows[0].events + rows[0].emails;
console.log(
  JSON.stringify(
    {
      ...rows[0],
      seedSeconds: +seed.toFixed(1),
      schemaSwapSeconds: +swap.toFixed(2),
      batch,
      moveSeconds: +move.toFixed(1),
      secondsPerMillionRows: +((move * 1e6) / rowsMoved).toFixed(1),
      note: 'move time per million rows of events and emails together (emails rows are wider)',
    },
    null,
    2,
  ),
);
