import { describe, expect, it } from 'vitest';
import { bodyOf } from '../../../test/api.js';
import { addresses, campaignToAll } from '../../../test/campaigns.js';
import { startRelayedPigeon } from '../../../test/mailing-pigeon.js';
import { verifiedSender } from '../../../test/sending.js';
import type { SmtpSink } from '../../../test/smtp-sink.js';
import { until } from '../../../test/until.js';
import { statusCommand } from '../../admin-commands.js';
import { queryRows, sql } from '../../db/query.js';
import { readTransportStatus } from '../../mail/transport-status.js';
import { databaseMetricsNow } from '../../metrics/database.js';
import { transportDuration } from '../../metrics/registry.js';
import { readOperations } from '../system/operations.js';

/**
 * Issue 64, item 3: two relays, each an SMTP sink that can be closed. A is first on both routes; it
 * is closed in the middle of a campaign: the rest goes through B, nothing is lost, nothing sent
 * twice, no attempt charged; A coming back takes the mail again.
 */
const RECIPIENTS = 40;
const { pigeon, sinks, dns } = await startRelayedPigeon(['a', 'b'], {
  DELIVERY_PROBE_BASE_MS: '200',
  DELIVERY_PROBE_MAX_MS: '1000',
  CAMPAIGN_DISPATCH_INTERVAL_MS: '100',
});
const a = sinks.a as SmtpSink;
const b = sinks.b as SmtpSink;
const db = pigeon.deps.db.pool;

const addressesIn = (sink: SmtpSink, tag: string) =>
  sink.messages.flatMap((m) => m.to).filter((t) => t.startsWith(tag));

describe('two relays with failover', () => {
  it('a relay closed mid-campaign: the rest goes through the other, every recipient once, no attempt charged', async () => {
    const tag = 'fo-';
    // Spread at 10 a second, so closing A falls in the campaign's middle.
    const run = await campaignToAll(
      pigeon,
      await verifiedSender(pigeon, dns),
      addresses(tag, RECIPIENTS, 'c.example'),
      { sendRate: 10 },
    );
    await run.send();
    await until(
      () => addressesIn(a, tag).length,
      (n) => n >= 5,
    );
    await a.stop();
    expect((await run.finished(60_000)).status).toBe('SENT');
    await new Promise((r) => setTimeout(r, 300)); // room for a duplicate to show up

    const viaA = addressesIn(a, tag);
    const viaB = addressesIn(b, tag);
    expect(viaA.length).toBeGreaterThanOrEqual(5);
    expect(viaB.length).toBeGreaterThan(0); // B took the rest
    expect(viaA.length + viaB.length).toBe(RECIPIENTS);
    expect(new Set([...viaA, ...viaB]).size).toBe(RECIPIENTS);
    expect((await readTransportStatus(db, 'a')).state).toBe('down');
    expect((await readTransportStatus(db, 'b')).state).toBe('up');
    // `pigeon status` lists each relay with its state; the metrics say it per relay too.
    const status = await statusCommand(pigeon.deps.config, pigeon.deps.logger, {});
    expect(status).toMatch(/^ {2}a +down since .*ago: .*(ECONNREFUSED|421|connect)/im);
    expect(status).toMatch(/^ {2}b +up$/m);
    const gauges = await databaseMetricsNow(
      await readOperations(db, pigeon.deps.config.health.heartbeatMs, ['a', 'b']),
      [],
    );
    const up = gauges.find((m) => m.name === 'pigeon_relay_up')?.values.map((v) => [v.labels.relay, v.value]);
    expect(up).toEqual([
      ['a', 0],
      ['b', 1],
    ]);
    const answered = (await transportDuration.get()).values.filter((v) => v.metricName?.endsWith('_count'));
    for (const relay of ['a', 'b']) {
      expect(answered.find((v) => v.labels.relay === relay)?.value ?? 0).toBeGreaterThan(0);
    }

    // Each email names the relay that took it, the sink it arrived at; none used more than its one attempt.
    const rows = await queryRows<{ to_email: string; relay: string; status: string; attempts: number }>(
      db,
      sql`SELECT to_email, relay, status, attempts FROM emails WHERE campaign_id = ${run.campaign.id}::uuid`,
    );
    expect(rows).toHaveLength(RECIPIENTS);
    for (const row of rows) {
      expect(row).toMatchObject({ status: 'SENT', attempts: 1 });
      expect(row.relay === 'a' ? viaA : viaB).toContain(row.to_email);
    }
    const [first] = rows;
    const detail = await run.client.sentEmails.get({
      params: { id: await emailIdOf(run.campaign.id, first?.to_email) },
    });
    expect(bodyOf(detail, 200).relay).toBe(first?.relay);

    // A is back: its probe takes a message, and from then on A, first on the route, takes the mail again.
    await a.restart();
    const again = 'back-';
    const sent: string[] = [];
    await until(
      async () => {
        const to = `${again}${sent.length}@c.example`;
        sent.push(to);
        await run.client.emails.send({ body: { to, from: run.sender.from, subject: 'again', body: '<p>again</p>' } });
        await until(
          () => [...addressesIn(a, again), ...addressesIn(b, again)].length,
          (n) => n === sent.length,
        );
        return readTransportStatus(db, 'a');
      },
      (status) => status.state === 'up',
      30_000,
    );
    const after = ['after-0@c.example', 'after-1@c.example', 'after-2@c.example'];
    for (const to of after) {
      await run.client.emails.send({ body: { to, from: run.sender.from, subject: 'after', body: '<p>after</p>' } });
    }
    await until(
      () => addressesIn(a, 'after-').length,
      (n) => n === after.length,
    );
    expect(addressesIn(b, 'after-')).toEqual([]);
    expect(new Set([...addressesIn(a, again), ...addressesIn(b, again)]).size).toBe(sent.length);
  }, 120_000);
});

async function emailIdOf(campaignId: string, to: string | undefined): Promise<string> {
  const [row] = await queryRows<{ id: string }>(
    db,
    sql`SELECT id FROM emails WHERE campaign_id = ${campaignId}::uuid AND to_email = ${to ?? ''}`,
  );
  return row?.id ?? '';
}
