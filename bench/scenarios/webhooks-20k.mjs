import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { descendantsCpuByProgram, startNode } from '../lib/process.mjs';
import { fmt, r1, waitFeedDrained } from '../lib/segments.mjs';
import { sleep } from '../lib/sending.mjs';

/**
 * A burst of event webhooks to one endpoint on loopback, against a bare program POSTing the same
 * signed payloads with the same concurrency, in the same run (issue 27). On a Pigeon of its own
 * with WEBHOOK_ALLOW_PRIVATE_NETWORKS=true (the receiver is on 127.0.0.1).
 *
 * Setup (untimed): CONTACTS contacts seeded in SQL, the change feed drained, one endpoint
 * (`bench.*`) on the receiver (services/webhook-receiver.mjs, its own process: answers 204 at once,
 * counts deliveries by webhook-id).
 *
 * Timed task: TOTAL `bench.burst` events inserted in one statement (as many tracks would record
 * them; the change feed turns each into a delivery), then the receiver is polled until it has every
 * webhook-id. Pigeon's rate = TOTAL ÷ (insert committed → last delivery received): it includes the
 * feed consumer queueing the deliveries. Then the baseline (baselines/bare-webhooks.mjs) POSTs the
 * very payloads and webhook-ids Pigeon stored, signed per request, CONCURRENCY in flight (Pigeon's
 * WEBHOOK_ENDPOINT_CONCURRENCY), keep-alive. Checks: every delivery SUCCEEDED, duplicates counted.
 */
const TOTAL = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 20_000);
const CONTACTS = 2_000;
const CONCURRENCY = 16;
const GIVE_UP_SECONDS = 300;
const BENCH_DIR = join(dirname(fileURLToPath(import.meta.url)), '..');
const now = () => performance.timeOrigin + performance.now();
const r3 = (n) => Math.round(n * 1000) / 1000;

async function receiverStats(url) {
  const res = await fetch(`${url}/stats`);
  return res.json();
}

export default {
  name: 'webhooks-20k',
  description: `${fmt(TOTAL)} events to one webhook endpoint on loopback vs a bare signed POST loop (same concurrency)`,
  pigeonEnv: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_ENDPOINT_CONCURRENCY: CONCURRENCY },
  target: { metric: 'ratio', min: 0.5, unit: '× bare', digits: 2, label: 'deliveries/s ≥ 0.5 × bare' },
  async run(ctx) {
    const receiver = startNode({
      name: 'webhook receiver',
      args: [join(BENCH_DIR, 'services', 'webhook-receiver.mjs')],
      env: { ...process.env, PORT: '0' },
      ready: /listening on (http:\/\/\S+)/,
    });
    const dir = mkdtempSync(join(tmpdir(), 'pigeon-bench-webhooks-'));
    try {
      await receiver.ready;
      const origin = /listening on (http:\/\/\S+)/.exec(receiver.output())[1];
      await ctx.sql(
        `INSERT INTO contacts (id, project_id, email, subscribed, data, created_at, updated_at)
         SELECT uuidv7_compat(), $1::uuid, 'wh' || i || '@webhooks.example', true, '{}', now(), now()
         FROM generate_series(0, $2::int - 1) AS i`,
        [ctx.projectId, CONTACTS],
      );
      await waitFeedDrained(ctx);
      const endpoint = await ctx.json('/webhook-endpoints', {
        method: 'POST',
        headers: ctx.auth,
        json: { url: `${origin}/hook`, eventTypes: ['bench.*'] },
      });

      const cpu0 = ctx.cpu();
      const split0 = descendantsCpuByProgram(ctx.pigeonPid);
      const t0 = now();
      await ctx.sql(
        `WITH ids AS (SELECT array_agg(id) AS a FROM contacts WHERE project_id = $1::uuid AND email LIKE 'wh%@webhooks.example')
         INSERT INTO events (id, project_id, contact_id, name, data)
         SELECT uuidv7_compat(), $1::uuid, ids.a[1 + i % $3::int], 'bench.burst', jsonb_build_object('n', i)
         FROM ids, generate_series(0, $2::int - 1) AS i`,
        [ctx.projectId, TOTAL, CONTACTS],
      );
      const inserted = now();
      let stats;
      for (;;) {
        stats = await receiverStats(origin);
        if (stats.distinct >= TOTAL) break;
        if (now() - inserted > GIVE_UP_SECONDS * 1000) break;
        await sleep(100, ctx.signal);
      }
      const cpu1 = ctx.cpu();
      const pigeonSeconds = (stats.lastAt - t0) / 1000;
      const pigeonPerSec = stats.distinct / pigeonSeconds;
      // CPU per delivery counts until every attempt is recorded (the records are part of the cost).
      let states;
      for (const started = now(); ; await sleep(100, ctx.signal)) {
        ({ rows: states } = await ctx.sql(
          'SELECT status, count(*)::int AS n FROM webhook_messages GROUP BY status ORDER BY status',
        ));
        if (!states.some((s) => s.status === 'PENDING' || s.status === 'SENDING')) break;
        if (now() - started > 30_000) break;
      }
      const split1 = descendantsCpuByProgram(ctx.pigeonPid);
      const cpu2 = ctx.cpu();
      const perDelivery = (seconds) => r3((seconds * 1000) / stats.distinct);
      const costs = {
        postgresMsPerDelivery: perDelivery(split1.postgres - split0.postgres),
        workersMsPerDelivery: perDelivery(split1.other - split0.other),
        apiMsPerDelivery: perDelivery(cpu2.pigeon - cpu0.pigeon),
      };
      const { rows: firstQueued } = await ctx.sql(
        'SELECT min(created_at) AS at, max(created_at) AS last FROM webhook_messages',
      );

      // The baseline: the same payloads and ids, signed per request, the same concurrency.
      const { rows: messages } = await ctx.sql(
        'SELECT webhook_id AS id, payload::text AS body FROM webhook_messages ORDER BY created_at, id',
      );
      const file = join(dir, 'messages.json');
      writeFileSync(file, JSON.stringify({ secret: endpoint.secret, messages }));
      await fetch(`${origin}/reset`, { method: 'POST' });
      const bare = startNode({
        name: 'bare-webhooks',
        args: [join(BENCH_DIR, 'baselines', 'bare-webhooks.mjs')],
        env: { ...process.env, FILE: file, URL: `${origin}/hook`, CONCURRENCY: String(CONCURRENCY) },
        ready: /^result \{.*\}$/m,
        timeoutMs: GIVE_UP_SECONDS * 1000,
      });
      await bare.ready;
      const baseline = JSON.parse(/^result (\{.*\})$/m.exec(bare.output())[1]);
      await bare.stop();
      const bareStats = await receiverStats(origin);

      const ratio = pigeonPerSec / baseline.perSec;
      const busy = (k) => r1(((cpu1[k] - cpu0[k]) / pigeonSeconds) * 100);
      const problems = [];
      if (stats.distinct < TOTAL) problems.push(`only ${stats.distinct} of ${TOTAL} webhook-ids arrived`);
      if (states.length !== 1 || states[0].status !== 'SUCCEEDED') problems.push(`states ${JSON.stringify(states)}`);
      if (baseline.failed || bareStats.distinct !== messages.length)
        problems.push(`baseline: ${JSON.stringify(baseline)}`);
      ctx.note(
        `Pigeon: ${fmt(stats.distinct)} deliveries in ${r1(pigeonSeconds)} s = ${fmt(Math.round(pigeonPerSec))}/s ` +
          `(${stats.duplicates} duplicates); last delivery queued ${r1((firstQueued[0].last - t0) / 1000)} s after the insert`,
      );
      ctx.note(`bare node:http keep-alive, ${CONCURRENCY} in flight: ${fmt(Math.round(baseline.perSec))}/s`);
      ctx.note(
        `CPU during Pigeon's burst (% of a core): API process ${busy('pigeon')}, its worker processes + PostgreSQL ${busy('db')}, machine (2 cores = 200) ${busy('machine')}`,
      );
      ctx.note(
        `CPU per delivery (insert → every attempt recorded): PostgreSQL ${costs.postgresMsPerDelivery} ms, ` +
          `worker processes ${costs.workersMsPerDelivery} ms, API process ${costs.apiMsPerDelivery} ms`,
      );
      return {
        ratio,
        pigeonPerSec: Math.round(pigeonPerSec),
        barePerSec: Math.round(baseline.perSec),
        pigeonSeconds: r1(pigeonSeconds),
        duplicates: stats.duplicates,
        ...costs,
        summary: `${fmt(Math.round(pigeonPerSec))} deliveries/s vs bare ${fmt(Math.round(baseline.perSec))}/s = ${ratio.toFixed(2)} × bare`,
        ...(problems.length ? { problem: problems.join('; ') } : {}),
      };
    } finally {
      await receiver.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
