// Helpers of the engagement scenarios (engagement-open, engagement-click): a few thousand tracked
// emails, delivered to the local outbox before the load starts, and the tracking paths in them.
import { emailCounts, SENDER, send, sleep, verifiedSenderDomain } from './sending.mjs';

const EMAILS = 5_000;
const PER_SEND = 100;

/**
 * Sends EMAILS tracked messages (100 recipients per POST /v1/send), waits until delivery has
 * written them all to the outbox (so the workers are idle during the measured run), and returns
 * the path of the open pixel and of the first click link of each, in a shuffled order.
 */
export async function trackedEmailPaths(ctx) {
  await verifiedSenderDomain(ctx);
  for (let i = 0; i < EMAILS / PER_SEND; i++) {
    const to = Array.from({ length: PER_SEND }, (_, j) => `reader${i * PER_SEND + j}@engagement.example`);
    await send(ctx, {
      to,
      from: SENDER,
      subject: 'News for {{email}}',
      body: '<html><body><p>Hello</p><a href="https://example.com/pricing?ref=mail">Pricing</a></body></html>',
      tracking: true,
      subscribed: true,
    });
  }
  const deadline = Date.now() + 120_000;
  while ((await emailCounts(ctx)).sent < EMAILS) {
    if (Date.now() > deadline) throw new Error(`only ${(await emailCounts(ctx)).sent} of ${EMAILS} delivered in 120 s`);
    await sleep(200, ctx.signal);
  }
  const { rows } = await ctx.sql('SELECT html FROM emails WHERE project_id = $1', [ctx.projectId]);
  const paths = rows.map(({ html }) => ({
    open: /src="https?:\/\/[^/]+(\/t\/o\/[^"]+)"/.exec(html)?.[1],
    click: /href="https?:\/\/[^/]+(\/t\/c\/[^"]+)"/.exec(html)?.[1],
  }));
  if (paths.some((p) => !p.open || !p.click)) throw new Error('a sent email has no open pixel or click link');
  return paths.sort(() => Math.random() - 0.5);
}

/** Counts and events recorded by the measured run (and its warm-up). */
export async function engagementCounts(ctx) {
  const { rows } = await ctx.sql(
    `SELECT (SELECT coalesce(sum(opens), 0)::int FROM emails WHERE project_id = $1) AS opens,
            (SELECT coalesce(sum(clicks), 0)::int FROM emails WHERE project_id = $1) AS clicks,
            (SELECT count(*)::int FROM events WHERE project_id = $1 AND name = 'email.open') AS open_events,
            (SELECT count(*)::int FROM events WHERE project_id = $1 AND name = 'email.click') AS click_events`,
    [ctx.projectId],
  );
  return rows[0];
}
