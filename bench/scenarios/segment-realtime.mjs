import { createSegment, fmt, percentile, r1, runAutocannon, waitFeedDrained } from '../lib/segments.mjs';
import { sleep } from '../lib/sending.mjs';

/**
 * Real-time membership of tracked segments. On a Pigeon of its own: 30,000 contacts seeded in SQL
 * (`rt<i>@realtime.example`, data {plan: one of 5, score: i % 100}), then 20 tracked DYNAMIC
 * segments (15 × data.score greaterThan 5, 10, …, 75; 5 × data.plan equals each plan), each
 * computed once (POST /segments/:id/compute) so membership starts in step with the data.
 *
 * Timed task: autocannon with `connections` connections POSTs /v1/track (public key) for
 * `--duration` seconds (and at most MAX_REQUESTS), one request at a time per connection, the
 * contacts of the pool in turn, with data that moves a little: score ± 1..8 (so ~1 threshold crossed per write), plan changed on 10% of
 * writes. The bench keeps each contact's data, so it knows which `segment.<slug>.entry` / `.exit`
 * events each write must cause. Meanwhile one harness connection polls the events table for
 * segment events (the query's start time is when an event was first seen). Latency = first seen −
 * the write's response, for every write that changes a membership; events still missing
 * RESULT_GRACE_SECONDS after the load count as never arriving. A contact is written at most every
 * pool ÷ rate seconds, so the events of one write are not confused with another's.
 *
 * Also checked: every segment event was expected (no duplicates), and after the run each contact's
 * last entry/exit per segment agrees with its data.
 */
const POOL = 30_000;
const PLANS = ['free', 'pro', 'team', 'enterprise', 'trial'];
const SCORE_THRESHOLDS = Array.from({ length: 15 }, (_, i) => 5 * (i + 1));
const MAX_REQUESTS = 300_000;
const RESULT_GRACE_SECONDS = 15;
const POLL_PAUSE_MS = 10;
const POLL_MARGIN_MS = 3000;
const EVENT = 'profile-update';

const now = () => performance.timeOrigin + performance.now(); // epoch ms

const SEED_SQL = `
  INSERT INTO contacts (id, project_id, email, subscribed, data, created_at, updated_at)
  SELECT uuidv7_compat(), $1::uuid, 'rt' || i || '@realtime.example', true,
         jsonb_build_object('plan', ($3::text[])[1 + i % ${PLANS.length}], 'score', i % 100), now(), now()
  FROM generate_series(0, $2::int - 1) AS i`;

/** The segments: a condition and the same rule in JS, for the bench's model of each contact. */
const RULES = [
  ...SCORE_THRESHOLDS.map((n) => ({
    name: `score > ${n}`,
    filter: { field: 'data.score', operator: 'greaterThan', value: n },
    test: (d) => typeof d.score === 'number' && d.score > n,
  })),
  ...PLANS.map((p) => ({
    name: `plan = ${p}`,
    filter: { field: 'data.plan', operator: 'equals', value: p },
    test: (d) => d.plan === p,
  })),
];

async function segmentEventCount(ctx, names) {
  return (
    await ctx.sql('SELECT count(*)::int AS n FROM events WHERE project_id = $1 AND name = ANY($2)', [
      ctx.projectId,
      names,
    ])
  ).rows[0].n;
}

export default {
  name: 'segment-realtime',
  description:
    `POST /v1/track with changing data for ${fmt(POOL)} contacts, 20 tracked segments: ` +
    'write response → segment entry/exit event visible',
  pigeonEnv: {},
  // As many as autocannon's `track` scenario uses: the latency under the same load.
  connections: 50,
  target: {
    metric: 'entryExitP95Ms',
    max: 1000,
    unit: 'ms',
    label: 'write → entry/exit event p95 ≤ 1 s',
  },
  async setup(ctx) {
    let t0 = performance.now();
    await ctx.sql(SEED_SQL, [ctx.projectId, POOL, PLANS]);
    await ctx.sql('VACUUM (ANALYZE) contacts');
    const { rows } = await ctx.sql(
      `SELECT id, email, data FROM contacts WHERE project_id = $1 AND email LIKE 'rt%@realtime.example'`,
      [ctx.projectId],
    );
    if (rows.length !== POOL) throw new Error(`seeded ${rows.length} contacts, expected ${POOL}`);
    const contacts = rows.map((r) => ({ id: r.id, email: r.email, data: { plan: r.data.plan, score: r.data.score } }));
    const seedS = (performance.now() - t0) / 1000;
    // The seed's changes read by the feed before any segment exists (they would be evaluated
    // against segments created meanwhile).
    await waitFeedDrained(ctx);

    t0 = performance.now();
    const segments = [];
    const tag = Date.now().toString(36);
    for (const rule of RULES) {
      const { segment } = await createSegment(ctx, {
        name: `rt ${rule.name} ${tag}`,
        type: 'DYNAMIC',
        condition: { logic: 'AND', groups: [{ filters: [rule.filter] }] },
        trackMembership: true,
      });
      if (!segment.slug || !segment.trackMembership)
        throw new Error(`segment without slug or trackMembership: ${JSON.stringify(segment)}`);
      segments.push({ ...rule, id: segment.id, slug: segment.slug });
    }
    const createS = (performance.now() - t0) / 1000;
    // Membership in step with the data before the run (whatever creation already did on its own).
    t0 = performance.now();
    const computed = { entered: 0, exited: 0 };
    for (const s of segments) {
      const r = await ctx.json(`/segments/${s.id}/compute`, { method: 'POST', headers: ctx.auth });
      computed.entered += r.entered;
      computed.exited += r.exited;
    }
    const computeS = (performance.now() - t0) / 1000;
    const names = segments.flatMap((s) => [`segment.${s.slug}.entry`, `segment.${s.slug}.exit`]);
    // Then wait until no segment event has been added for 2 s (a background pass may still run).
    t0 = performance.now();
    let last = -1;
    let stableSince = performance.now();
    for (;;) {
      const n = await segmentEventCount(ctx, names);
      if (n !== last) {
        last = n;
        stableSince = performance.now();
      } else if (performance.now() - stableSince > 2000) break;
      if (performance.now() - t0 > 120_000) throw new Error('segment events still being added 120 s after setup');
      await sleep(250, ctx.signal);
    }
    const expectedMembers = segments.map((s) => contacts.filter((c) => s.test(c.data)).length);
    Object.assign(ctx.state, { contacts, segments, names, eventsBefore: last });
    ctx.note(
      `setup: ${fmt(POOL)} contacts seeded in ${fmt(seedS, 1)} s; 20 tracked segments created in ${fmt(createS, 1)} s ` +
        `(${segments.map((s) => s.slug).join(', ')}); compute of all 20 ${fmt(computeS, 1)} s ` +
        `(entered ${fmt(computed.entered)}, exited ${fmt(computed.exited)}); ${fmt(last)} segment events before the run ` +
        `(members by the data: ${fmt(expectedMembers.reduce((a, b) => a + b, 0))})`,
    );
  },

  async run(ctx) {
    const { contacts, segments, names } = ctx.state;
    const W = ctx.connections;
    const byName = new Map(
      segments.flatMap((s) => [
        [`segment.${s.slug}.entry`, s],
        [`segment.${s.slug}.exit`, s],
      ]),
    );
    const initial = contacts.map((c) => ({ ...c.data })); // for the final check
    const writes = []; // writes that must change a membership: { contactId, names, sentAt, answeredAt }
    const cutOff = []; // writes sent but not answered when the run stopped
    const trackMs = [];
    let requests = 0;
    let failures = 0;
    let lastFailure = '';

    // ---- the poller: segment events as they become visible ------------------------------------
    const seen = new Map(); // event id → { contactId, name, createdAt, appearedAt }
    let polling = true;
    let maxLagMs = 0;
    const pollMs = [];
    const runStart = now();
    let since = new Date(runStart - 1000);
    let pollerFailure;
    const poller = (async () => {
      while (polling) {
        const q0 = now();
        const { rows } = await ctx.sql(
          `SELECT id, contact_id, name, created_at FROM events
           WHERE project_id = $1 AND name = ANY($2) AND created_at >= $3`,
          [ctx.projectId, names, since],
        );
        pollMs.push(now() - q0);
        let newest = since.getTime();
        for (const r of rows) {
          const createdAt = r.created_at.getTime();
          if (!seen.has(r.id)) {
            seen.set(r.id, { id: r.id, contactId: r.contact_id, name: r.name, createdAt, appearedAt: q0 });
            maxLagMs = Math.max(maxLagMs, q0 - createdAt);
          }
          newest = Math.max(newest, createdAt);
        }
        // Rows commit out of created_at order: look back the margin plus the largest lag seen.
        since = new Date(Math.max(since.getTime(), newest - POLL_MARGIN_MS - maxLagMs));
        await sleep(POLL_PAUSE_MS, ctx.signal);
      }
    })().catch((err) => {
      pollerFailure = err;
    });
    const stopPoller = async () => {
      polling = false;
      await poller;
      if (pollerFailure) throw pollerFailure;
    };

    // ---- the load: autocannon, `W` connections, one request at a time each -----------------------
    // Contacts in turn (a contact comes round again only after the whole pool); setupRequest (called
    // just before a request is written) picks the contact and its next data, onResponse (called as
    // the response completes) records the write. autocannon rather than fetch: the load generator
    // must not take the core Pigeon needs.
    let k = 0;
    let instance;
    const nextWrite = () => {
      const c = contacts[k++ % contacts.length];
      const old = c.data;
      const step = (1 + Math.floor(Math.random() * 8)) * (Math.random() < 0.5 ? -1 : 1);
      let score = old.score + step;
      if (score < 0 || score > 99) score = old.score - step;
      const plan =
        Math.random() < 0.1 ? PLANS[(PLANS.indexOf(old.plan) + 1 + Math.floor(Math.random() * 4)) % 5] : old.plan;
      const next = { plan, score };
      const changes = segments
        .filter((s) => s.test(old) !== s.test(next))
        .map((s) => `segment.${s.slug}.${s.test(next) ? 'entry' : 'exit'}`);
      return { c, next, changes };
    };
    const request = {
      method: 'POST',
      path: '/v1/track',
      headers: { ...ctx.publicAuth, 'content-type': 'application/json' },
      setupRequest(req, context) {
        const w = nextWrite();
        w.c.inFlight = w;
        context.write = w;
        requests++;
        w.sentAt = now();
        return { ...req, body: JSON.stringify({ email: w.c.email, event: EVENT, data: w.next }) };
      },
      onResponse(status, body, context) {
        const answeredAt = now();
        const w = context.write;
        if (!w) return;
        context.write = undefined;
        w.c.inFlight = undefined;
        trackMs.push(answeredAt - w.sentAt);
        if (status !== 200) {
          failures++;
          lastFailure = `${status}: ${String(body).slice(0, 200)}`;
          w.c.dirty = true; // its stored data is unknown now: left out of the checks
          return;
        }
        w.c.data = w.next;
        if (w.changes.length) writes.push({ contactId: w.c.id, names: w.changes, sentAt: w.sentAt, answeredAt });
        if (requests >= MAX_REQUESTS) instance?.stop();
      },
    };
    const loadStart = now();
    let loadSeconds;
    const expectedTotal = () => writes.reduce((a, w) => a + w.names.length, 0);
    try {
      const result = await runAutocannon(
        ctx,
        { url: ctx.baseUrl, connections: W, duration: ctx.duration, requests: [request] },
        (started) => {
          instance = started;
        },
      );
      loadSeconds = (now() - loadStart) / 1000;
      // Requests without a response (errors, timeouts, cut off at the end): their contacts' data
      // is unknown.
      // The events of writes cut off by the end of the run may still come: not counted as unexpected.
      for (const c of contacts)
        if (c.inFlight) {
          c.dirty = true;
          cutOff.push(c.inFlight);
        }
      const lost = result.errors + result.timeouts;
      if (lost) {
        failures += lost;
        lastFailure ||= `${result.errors} errors, ${result.timeouts} timeouts`;
      }
      // ---- wait for the expected events (at most RESULT_GRACE_SECONDS) ---------------------------
      const graceEnd = now() + RESULT_GRACE_SECONDS * 1000;
      while (now() < graceEnd && seen.size < expectedTotal() && !pollerFailure) await sleep(100, ctx.signal);
      // A little longer for events nobody expected (duplicates) to show up too.
      await sleep(1000, ctx.signal);
    } finally {
      await stopPoller();
    }
    const drainedAt = now();

    // Events the poller did not see (committed later than its look-back): found by a final sweep.
    const { rows: sweep } = await ctx.sql(
      `SELECT id, contact_id, name, created_at FROM events
       WHERE project_id = $1 AND name = ANY($2) AND created_at >= $3`,
      [ctx.projectId, names, new Date(runStart - 1000)],
    );
    let sweptLate = 0;
    for (const r of sweep)
      if (!seen.has(r.id)) {
        sweptLate++;
        seen.set(r.id, {
          id: r.id,
          contactId: r.contact_id,
          name: r.name,
          createdAt: r.created_at.getTime(),
          appearedAt: drainedAt,
        });
      }

    const expected = expectedTotal();
    // Pair the i-th expected (contact, event name) with the i-th seen, both in time order.
    const observed = new Map();
    for (const e of [...seen.values()].sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1))) {
      const key = `${e.contactId}|${e.name}`;
      if (!observed.has(key)) observed.set(key, []);
      observed.get(key).push(e);
    }
    const latencies = [];
    let missing = 0;
    let beforeAnswer = 0;
    const used = new Map();
    for (const w of writes) {
      for (const name of w.names) {
        const key = `${w.contactId}|${name}`;
        const i = used.get(key) ?? 0;
        const e = observed.get(key)?.[i];
        used.set(key, i + 1);
        if (!e) {
          missing++;
          latencies.push(Number.POSITIVE_INFINITY);
          continue;
        }
        const ms = e.appearedAt - w.answeredAt;
        if (ms <= 0) beforeAnswer++;
        latencies.push(Math.max(0, ms));
      }
    }
    const mayCome = new Map();
    for (const w of cutOff)
      for (const name of w.changes) mayCome.set(`${w.c.id}|${name}`, 1 + (mayCome.get(`${w.c.id}|${name}`) ?? 0));
    let unexpected = 0;
    let ofCutOff = 0;
    for (const [key, list] of observed) {
      const extra = Math.max(0, list.length - (used.get(key) ?? 0));
      const explained = Math.min(extra, mayCome.get(key) ?? 0);
      ofCutOff += explained;
      unexpected += extra - explained;
    }
    latencies.sort((a, b) => a - b);
    const pct = (p) => {
      const v = percentile(latencies, p);
      return v === null || !Number.isFinite(v) ? null : r1(v);
    };

    // Final membership: each contact's last entry/exit per segment (or its membership at the start
    // when it has none) against its data now.
    const { rows: lastEvents } = await ctx.sql(
      `SELECT DISTINCT ON (contact_id, split_part(name, '.', 2)) contact_id, name FROM events
       WHERE project_id = $1 AND name = ANY($2)
       ORDER BY contact_id, split_part(name, '.', 2), created_at DESC, id DESC`,
      [ctx.projectId, names],
    );
    const lastOf = new Map(lastEvents.map((r) => [`${r.contact_id}|${byName.get(r.name).slug}`, r.name]));
    let wrong = 0;
    let checked = 0;
    contacts.forEach((c, i) => {
      if (c.dirty) return;
      for (const s of segments) {
        checked++;
        const last = lastOf.get(`${c.id}|${s.slug}`);
        const member = last ? last.endsWith('.entry') : s.test(initial[i]);
        if (member !== s.test(c.data)) wrong++;
      }
    });

    trackMs.sort((a, b) => a - b);
    const reqPerSec = requests / loadSeconds;
    const problems = [];
    if (failures) problems.push(`${fmt(failures)} track requests failed (last: ${lastFailure})`);
    if (missing)
      problems.push(
        `${fmt(missing)} of ${fmt(expected)} expected events not there ${RESULT_GRACE_SECONDS} s after the load`,
      );
    if (unexpected) problems.push(`${fmt(unexpected)} segment events nobody expected (duplicates?)`);
    if (wrong)
      problems.push(
        `final membership disagrees with the data for ${fmt(wrong)} of ${fmt(checked)} (contact, segment) pairs`,
      );
    pollMs.sort((a, b) => a - b);
    ctx.note(
      `load: ${fmt(requests)} POST /v1/track in ${fmt(loadSeconds, 1)} s (${fmt(reqPerSec)} req/s, ${W} connections), ` +
        `track latency p50 ${fmt(percentile(trackMs, 50), 1)} ms, p99 ${fmt(percentile(trackMs, 99), 1)} ms; ` +
        `${fmt(writes.length)} writes changed a membership, ${fmt(expected)} entry/exit events expected`,
    );
    ctx.note(
      `events: ${fmt(latencies.length - missing)} seen (${fmt(beforeAnswer)} already visible when the write was answered), ` +
        `${fmt(missing)} missing, ${fmt(unexpected)} unexpected, ${fmt(sweptLate)} found only by the final sweep, ` +
        `${fmt(ofCutOff)} of the ${fmt(cutOff.length)} writes still in flight when the load stopped (not measured); ` +
        `latency p50 ${fmt(pct(50))} ms, p95 ${fmt(pct(95))} ms, p99 ${fmt(pct(99))} ms, max ${fmt(pct(100))} ms ` +
        `(poll query median ${fmt(percentile(pollMs, 50), 1)} ms + ${POLL_PAUSE_MS} ms pause: the resolution)`,
    );
    ctx.note(
      `final membership check: ${fmt(checked - wrong)} of ${fmt(checked)} (contact, segment) pairs agree with the data`,
    );
    return {
      entryExitP50Ms: pct(50),
      entryExitP95Ms: pct(95),
      entryExitP99Ms: pct(99),
      entryExitMaxMs: pct(100),
      trackReqPerSec: Math.round(reqPerSec),
      trackP50Ms: r1(percentile(trackMs, 50)),
      trackP99Ms: r1(percentile(trackMs, 99)),
      requests,
      failures,
      writesChangingMembership: writes.length,
      expectedEvents: expected,
      missingEvents: missing,
      unexpectedEvents: unexpected,
      membershipMismatches: wrong,
      ...(problems.length && { problem: problems.join('; ') }),
      summary:
        `track ${fmt(reqPerSec)} req/s; write → entry/exit event p50 ${fmt(pct(50))} ms, p95 ${fmt(pct(95))} ms ` +
        `(${fmt(expected)} events${missing ? `, ${fmt(missing)} missing` : ''})`,
    };
  },
};
