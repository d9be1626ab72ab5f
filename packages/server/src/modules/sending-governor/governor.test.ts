import { describe, expect, it } from 'vitest';
import { api, bodyOf } from '../../../test/api.js';
import { addresses, campaignToAll } from '../../../test/campaigns.js';
import { startMailingPigeon } from '../../../test/mailing-pigeon.js';
import { verifiedSender } from '../../../test/sending.js';
import { until } from '../../../test/until.js';
import { queryRows, sql } from '../../db/query.js';
import { governorDeferrals, governorHeld, governorRate } from '../../metrics/registry.js';
import { nextDayStart } from './warmup.js';

const MAX_RATE = 1000;
const MIN_RATE = 5;
const { pigeon, sink, dns } = await startMailingPigeon({
  DELIVERY_RETRY_BASE_MS: '100',
  DELIVERY_RETRY_MAX_MS: '400',
  CAMPAIGN_DISPATCH_INTERVAL_MS: '100',
  GOVERNOR_MAX_RATE: String(MAX_RATE),
  GOVERNOR_MIN_RATE: String(MIN_RATE),
});

const GMAIL = 'gmail-test.example';
const OTHER = 'other-test.example';
dns.setMx(GMAIL, '5 alt1.gmail-smtp-in.l.google.com', '10 alt2.gmail-smtp-in.l.google.com');
dns.setMx(OTHER, `10 mx.${OTHER}`);

const metric = async (m: { get(): Promise<{ values: Array<{ value: number; labels: object }> }> }, labels: object) =>
  (await m.get()).values.find((v) => Object.entries(labels).every(([k, x]) => (v.labels as never)[k] === x))?.value ??
  0;

const received = (tag: string, domain: string) =>
  sink.messages.flatMap((m) => m.to).filter((to) => to.startsWith(tag) && to.endsWith(`@${domain}`));

describe('the governor per mailbox provider', () => {
  it('slows the group that defers, alone, and sends everything once when the deferrals stop', async () => {
    sink.deferDomain(GMAIL, 451);
    const run = await campaignToAll(pigeon, await verifiedSender(pigeon, dns), [
      ...addresses('gov', 20, GMAIL),
      ...addresses('gov', 20, OTHER),
    ]);
    await run.send();
    const campaignId = run.campaign.id;
    // The other group's mail goes through while the gmail group defers, never held back.
    await until(
      () => received('gov', OTHER).length,
      (n) => n === 20,
    );
    expect(received('gov', GMAIL)).toEqual([]);
    const slowed = await until(
      async () => ({
        rate: await metric(governorRate, { group: 'gmail' }),
        held: await metric(governorHeld, { reason: 'rate', group: 'gmail' }),
      }),
      // Deferrals keep coming while it defers: the rate halves (once a second) down to its floor.
      (g) => g.held > 0 && g.rate === MIN_RATE,
    );
    // Tries of deferred mail that were due came back untried: fewer went to the group than were asked for.
    expect(slowed.held).toBeGreaterThan(0);
    expect(slowed.rate).toBe(MIN_RATE);
    expect(await metric(governorDeferrals, { group: 'gmail' })).toBeGreaterThan(0);
    expect(await metric(governorRate, { group: 'other' })).toBe(MAX_RATE);
    expect(await metric(governorHeld, { reason: 'rate', group: 'other' })).toBe(0);
    expect(await metric(governorDeferrals, { group: 'other' })).toBe(0);
    // The sink holds a message a moment before its row is marked SENT: wait for the rows, then read their tries.
    const others = await until(
      () =>
        queryRows<{ attempts: number }>(
          pigeon.deps.db.pool,
          sql`SELECT attempts FROM emails WHERE campaign_id = ${campaignId}::uuid AND to_email LIKE ${`%@${OTHER}`}
                AND status = 'SENT'`,
        ),
      (rows) => rows.length === 20,
    );
    expect(others.map((r) => r.attempts)).toEqual(Array(20).fill(1));

    sink.deferDomain(GMAIL, null);
    expect((await run.finished(60_000)).status).toBe('SENT');
    await new Promise((r) => setTimeout(r, 300)); // room for a duplicate to show up
    const gmail = received('gov', GMAIL);
    expect(gmail).toHaveLength(20);
    expect(new Set(gmail).size).toBe(20);
    expect(received('gov', OTHER)).toHaveLength(20);
    const statuses = await queryRows<{ status: string; n: number }>(
      pigeon.deps.db.pool,
      sql`SELECT status, count(*)::int AS n FROM emails WHERE campaign_id = ${campaignId}::uuid GROUP BY status`,
    );
    expect(statuses).toEqual([{ status: 'SENT', n: 40 }]);
    // Accepted mail brings the rate back up.
    expect(await metric(governorRate, { group: 'gmail' })).toBeGreaterThan(MIN_RATE);
  });
});

describe('warm-up per sender domain', () => {
  it('sends the day’s cap of a campaign and holds the rest, uncharged, until the next day', async () => {
    const CAP = 5;
    const s = await verifiedSender(pigeon, dns);
    const owner = api(pigeon, s.auth);
    const domains = bodyOf(await owner.domains.list({ params: { projectId: s.project.id } }), 200);
    const domainId = domains[0]?.id as string;
    const before = bodyOf(await owner.domains.get({ params: { id: domainId } }), 200);
    expect(before.warmup).toMatchObject({ enabled: false, capToday: null, sentToday: 0 });
    const set = await owner.domains.setWarmup({
      params: { id: domainId },
      body: { enabled: true, startCap: CAP, targetCap: 1000, days: 10 },
    });
    expect(bodyOf(set, 200).warmup).toMatchObject({ enabled: true, day: 1, capToday: CAP, sentToday: 0 });
    // Another project's domain is not found, read or written.
    const stranger = api(pigeon, (await verifiedSender(pigeon, dns)).auth);
    expect((await stranger.domains.get({ params: { id: domainId } })).status).toBe(404);
    const settings = { enabled: false, startCap: 1, targetCap: 1, days: 1 };
    expect((await stranger.domains.setWarmup({ params: { id: domainId }, body: settings })).status).toBe(404);

    const run = await campaignToAll(pigeon, s, addresses('warm', 12, OTHER));
    await run.send();
    const { client, campaign } = run;

    const nextDay = new Date(nextDayStart(Date.now())).toISOString();
    const rows = () =>
      queryRows<{ status: string; attempts: number; next: string }>(
        pigeon.deps.db.pool,
        sql`SELECT status, attempts, to_char(next_attempt_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS next
            FROM emails WHERE campaign_id = ${campaign.id}::uuid ORDER BY status`,
      );
    const settled = await until(
      rows,
      (r) =>
        r.filter((x) => x.status === 'SENT').length === CAP &&
        r.every((x) => x.status !== 'SENDING') &&
        r.filter((x) => x.status === 'QUEUED' && x.next === nextDay).length === 12 - CAP,
    );
    const held = settled.filter((r) => r.status === 'QUEUED');
    expect(held).toHaveLength(12 - CAP);
    // Held back untried: no attempt used, due at the next day boundary (midnight UTC).
    expect(held.every((r) => r.attempts === 0 && r.next === nextDay)).toBe(true);
    expect(received('warm', OTHER)).toHaveLength(CAP);
    const after = bodyOf(await owner.domains.get({ params: { id: domainId } }), 200);
    expect(after.warmup).toMatchObject({ capToday: CAP, sentToday: CAP, nextResetAt: nextDay });
    expect(await metric(governorHeld, { reason: 'warmup', group: 'other' })).toBeGreaterThanOrEqual(12 - CAP);

    // Transactional mail is counted, never held.
    const sent = await client.emails.send({
      body: { to: `receipt@${OTHER}`, subject: 'Receipt', body: 'Thanks', from: s.from },
    });
    expect(sent.status).toBe(200);
    await until(
      () => received('receipt', OTHER).length,
      (n) => n === 1,
    );
    const counted = await until(
      async () => bodyOf(await owner.domains.get({ params: { id: domainId } }), 200).warmup.sentToday,
      (n) => n === CAP + 1,
    );
    expect(counted).toBe(CAP + 1);
    expect(received('warm', OTHER)).toHaveLength(CAP);
  });
});
