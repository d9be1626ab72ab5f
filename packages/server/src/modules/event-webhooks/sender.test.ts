import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { startTarget, type Target } from '../../../test/webhook-targets.js';
import { until } from '../../../test/workflows.js';
import { generateWebhookSecret } from '../webhooks/service.js';
import type { DeliveryRow } from './record.js';
import { createSender } from './sender.js';

let pigeon: TestPigeon;
beforeAll(async () => {
  pigeon = await startTestPigeon({ role: 'api', env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
});
afterAll(() => pigeon?.stop());

/** A receiver that answers only when told to: `held` are the requests it has not answered yet. */
async function holdingTarget() {
  const held: ServerResponse[] = [];
  const target = await startTarget((_req, res) => held.push(res));
  return { target, held };
}

const secret = generateWebhookSecret();
const row = (target: Target, endpointId: string, n: number): DeliveryRow => ({
  id: crypto.randomUUID(),
  webhook_id: `msg_${endpointId}_${n}`,
  endpoint_id: endpointId,
  project_id: crypto.randomUUID(),
  body: JSON.stringify({ n }),
  attempts: 1,
  replay: false,
  url: `${target.origin}/hook`,
  secret,
  previous_secret: null,
  previous_secret_expires_at: null,
});

it('keeps at most WEBHOOK_CONCURRENCY requests open in the process and WEBHOOK_ENDPOINT_CONCURRENCY per endpoint', async () => {
  const webhooks = { ...pigeon.deps.config.webhooks, concurrency: 2, endpointConcurrency: 1 };
  const sender = createSender({ ...pigeon.deps, config: { ...pigeon.deps.config, webhooks } });
  const endpoints = await Promise.all(['a', 'b', 'c'].map(async (id) => ({ id, ...(await holdingTarget()) })));
  try {
    const [a, b, c] = endpoints as [(typeof endpoints)[0], (typeof endpoints)[0], (typeof endpoints)[0]];
    const attempts = [row(a.target, 'a', 1), row(a.target, 'a', 2), row(b.target, 'b', 1), row(c.target, 'c', 1)].map(
      (r) => sender.submit(r),
    );
    const open = () => endpoints.reduce((n, e) => n + e.held.length, 0);
    await until(open, (n) => n === 2);
    expect(a.held).toHaveLength(1); // a's second waits for a's first, whatever the process has free
    expect(b.held).toHaveLength(1);
    expect(c.held).toHaveLength(0); // c waits for a process-wide slot
    expect(sender.waiting('a') + sender.waiting('c')).toBe(2);

    // Answer everything as it arrives: every attempt ends, never more than two open at once.
    let most = 0;
    const answering = setInterval(() => {
      most = Math.max(most, open());
      for (const e of endpoints) for (const res of e.held.splice(0)) res.end('ok');
    }, 5);
    try {
      const outcomes = await Promise.all(attempts.map((x) => x.outcome));
      expect(outcomes.map((o) => o?.result.outcome)).toEqual(['success', 'success', 'success', 'success']);
      expect(most).toBeLessThanOrEqual(2);
      expect(c.target.received).toHaveLength(1);
    } finally {
      clearInterval(answering);
    }
  } finally {
    sender.close();
    sender.destroy();
    await Promise.all(endpoints.map((e) => e.target.close()));
  }
});

it('cancels an attempt that has not started; one under way is not cancelled', async () => {
  const webhooks = { ...pigeon.deps.config.webhooks, endpointConcurrency: 1 };
  const sender = createSender({ ...pigeon.deps, config: { ...pigeon.deps.config, webhooks } });
  const { target, held } = await holdingTarget();
  try {
    const first = sender.submit(row(target, 'x', 1));
    const second = sender.submit(row(target, 'x', 2));
    await until(
      () => held.length,
      (n) => n === 1,
    );
    expect(first.cancel()).toBe(false);
    expect(second.cancel()).toBe(true);
    expect(await second.outcome).toBeUndefined();
    for (const res of held.splice(0)) res.end('ok');
    expect((await first.outcome)?.result.outcome).toBe('success');
    expect(target.received).toHaveLength(1);
  } finally {
    sender.close();
    sender.destroy();
    await target.close();
  }
});
