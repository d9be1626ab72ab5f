import { expect, it } from 'vitest';
import { loopWakeups } from '../src/metrics/registry.js';
import { api, bodyOf } from './api.js';
import { campaignToAll } from './campaigns.js';
import { startMailingPigeon } from './mailing-pigeon.js';
import { verifiedSender } from './sending.js';
import { startTarget } from './webhook-targets.js';
import { buildWorkflow, createTemplate, track, until } from './workflows.js';

/**
 * Every background loop wakes on its NOTIFY: each idle wait is set to 10 minutes, far beyond the
 * test, so work done here was started by a NOTIFY, never by a poll (the wake-up metric says which:
 * `timer` counts every wait that ran out, a poll or a loop's own next due time).
 */
const TEN_MINUTES = '600000';
const { pigeon, sink, dns } = await startMailingPigeon({
  DELIVERY_POLL_MS: TEN_MINUTES,
  CHANGE_FEED_POLL_MS: TEN_MINUTES,
  WORKFLOW_POLL_MS: TEN_MINUTES,
  // One runner: with several, the ones that find the execution a sibling holds wait for its due
  // time (a timer of 10 ms), which would blur the count of waits that ran out.
  WORKFLOW_CONCURRENCY: '1',
  WEBHOOK_POLL_MS: TEN_MINUTES,
  CAMPAIGN_DISPATCH_INTERVAL_MS: TEN_MINUTES,
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
});
const s = await verifiedSender(pigeon, dns);
const client = api(pigeon, s.auth);

const wakeups = async (loop: string, cause: 'notify' | 'timer') =>
  (await loopWakeups.get()).values.find((v) => v.labels.loop === loop && v.labels.cause === cause)?.value ?? 0;

/** The loop was woken by NOTIFY since `before`, and no wait of it ran out (no poll, no timer). */
async function expectNotifiedOnly(loop: string, before: number) {
  expect(await wakeups(loop, 'notify')).toBeGreaterThan(before);
  expect(await wakeups(loop, 'timer')).toBe(0);
}

const mailTo = (address: string) =>
  until(
    () => sink.messages.filter((m) => m.to.includes(address)),
    (m) => m.length > 0,
  );

it('delivery: a queued email is sent at once', async () => {
  const before = await wakeups('delivery', 'notify');
  const to = 'wake-send@example.com';
  bodyOf(await client.emails.send({ body: { to, from: s.from, subject: 'Now', body: '<p>now</p>' } }), 200);
  expect(await mailTo(to)).toHaveLength(1);
  await expectNotifiedOnly('delivery', before);
});

it('change feed and workflows: a tracked event starts its workflow, whose email is sent', async () => {
  const feedBefore = await wakeups('change-feed.workflows.triggers', 'notify');
  const runnerBefore = await wakeups('workflows', 'notify');
  const template = await createTemplate(pigeon, s.auth, { subject: 'Welcome', body: '<p>hi</p>', from: s.from });
  await buildWorkflow(pigeon, s.auth, {
    trigger: 'wake.signup',
    steps: [{ key: 'mail', type: 'SEND_EMAIL', config: { templateId: template } }],
    transitions: [],
  });
  const to = 'wake-workflow@example.com';
  await track(pigeon, s.auth, to, 'wake.signup');
  expect(await mailTo(to)).toHaveLength(1);
  await expectNotifiedOnly('change-feed.workflows.triggers', feedBefore);
  await expectNotifiedOnly('workflows', runnerBefore);
});

it('event webhooks: a test event, queued for the claim loop, is delivered at once', async () => {
  const before = await wakeups('event-webhooks', 'notify');
  const target = await startTarget((_req, res) => res.end('ok'));
  try {
    const endpoint = bodyOf(
      // No event of this file matches it: only the test event goes there.
      await client.webhookEndpoints.create({ body: { url: `${target.origin}/hook`, eventTypes: ['wake.never'] } }),
      201,
    );
    bodyOf(await client.webhookEndpoints.test({ params: { id: endpoint.id }, body: {} }), 202);
    const received = await until(
      () => target.received.filter((r) => r.path === '/hook'),
      (r) => r.length > 0,
    );
    expect(received).toHaveLength(1);
    await expectNotifiedOnly('event-webhooks', before);
  } finally {
    await target.close();
  }
});

it('campaign dispatcher: a campaign scheduled a moment ahead starts when due, not at the next poll', async () => {
  const before = await wakeups('campaigns', 'notify');
  const to = 'wake-campaign@example.com';
  const run = await campaignToAll(pigeon, s, [to]);
  await run.send({ scheduledFor: new Date(Date.now() + 1000).toISOString() });
  expect(await mailTo(to)).toHaveLength(1);
  // The NOTIFY woke the dispatcher, which then waited for the schedule (its one timer), not 10 minutes.
  expect(await wakeups('campaigns', 'notify')).toBeGreaterThan(before);
  expect(await wakeups('campaigns', 'timer')).toBe(1);
});
