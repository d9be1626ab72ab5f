import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyOf } from './api.js';
import { addresses, campaignToAll } from './campaigns.js';
import { startDnsServer, type TestDnsServer } from './dns-server.js';
import { startHangingRelay } from './hanging-relay.js';
import { startTestPigeon } from './helpers.js';
import { verifiedSender } from './sending.js';
import { startSmtpSink } from './smtp-sink.js';

/**
 * Issue 57, item 3: a relay that takes the connection and then never answers. nodemailer's pool
 * used to send such a message again by itself (its requeue) while Pigeon retried it too; now each
 * attempt is Pigeon's alone, so a message whose attempt hung is sent once, by the next attempt.
 */
const RECIPIENTS = 120;

let dns: TestDnsServer;
beforeAll(async () => {
  dns = await startDnsServer();
});
afterAll(() => dns?.close());

describe('a relay that accepts and never answers', () => {
  for (const at of ['connect', 'data'] as const) {
    it(`hanging at ${at === 'connect' ? 'the greeting' : 'DATA, before the final dot'}: every message arrives once`, async () => {
      const sink = await startSmtpSink();
      const relay = await startHangingRelay(sink.port, { every: 3, at });
      // Short timeouts (nodemailer reads them from the URL) so that hung attempts end within the test.
      const pigeon = await startTestPigeon({
        env: {
          SMTP_URL: `${relay.url}?greetingTimeout=400&socketTimeout=800&connectionTimeout=800&maxMessages=10`,
          DNS_SERVERS: dns.address,
          DELIVERY_PROBE_BASE_MS: '100',
          DELIVERY_PROBE_MAX_MS: '400',
          CAMPAIGN_DISPATCH_INTERVAL_MS: '100',
        },
      });
      try {
        const tag = `hang-${at}-`;
        const run = await campaignToAll(
          pigeon,
          await verifiedSender(pigeon, dns),
          addresses(tag, RECIPIENTS, 'c.example'),
        );
        await run.send();
        expect((await run.finished(90_000)).status).toBe('SENT');
        await new Promise((r) => setTimeout(r, 1500)); // room for a late copy to arrive
        expect(relay.hung()).toBeGreaterThan(0); // attempts really hung
        const ours = sink.messages.filter((m) => m.to.some((t) => t.startsWith(tag)));
        const ids = ours.map((m) => m.messageId);
        expect(new Set(ids).size).toBe(RECIPIENTS);
        expect(ids).toHaveLength(RECIPIENTS); // no Message-ID twice
        const stats = bodyOf(await run.client.campaigns.stats({ params: run.params }), 200);
        expect(stats).toMatchObject({ sent: RECIPIENTS, pending: 0, cancelled: 0 });
      } finally {
        await pigeon.stop();
        await relay.close();
        await sink.close();
      }
    }, 120_000);
  }
});
