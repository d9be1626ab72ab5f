import { describe, expect, it } from 'vitest';
import { api, bodyOf } from '../../../test/api.js';
import { campaignToAll } from '../../../test/campaigns.js';
import { expectEnvelope } from '../../../test/helpers.js';
import { startRelayedPigeon } from '../../../test/mailing-pigeon.js';
import { verifiedSender } from '../../../test/sending.js';
import type { SmtpSink } from '../../../test/smtp-sink.js';
import { until } from '../../../test/until.js';
import { relaysOfProject } from '../../mail/relays.js';

/**
 * Issue 64, item 3: each stream has its route (transactional mail through A, campaign mail through
 * B here), and a project may choose its own, from the installation's relays only.
 */
const { pigeon, sinks, dns } = await startRelayedPigeon(['a', 'b'], {
  RELAY_ROUTE_TRANSACTIONAL: 'a',
  RELAY_ROUTE_CAMPAIGN: 'b',
  CAMPAIGN_DISPATCH_INTERVAL_MS: '100',
});
const a = sinks.a as SmtpSink;
const b = sinks.b as SmtpSink;

const arrivedAt = async (to: string) => {
  const inA = () => a.messages.some((m) => m.to.includes(to));
  const inB = () => b.messages.some((m) => m.to.includes(to));
  await until(
    () => inA() || inB(),
    (found) => found,
  );
  return inA() ? 'a' : 'b';
};

/** A campaign from `s` to all its contacts, `to` (a new one) among them, sent. */
async function sendCampaign(s: Awaited<ReturnType<typeof verifiedSender>>, to: string) {
  const run = await campaignToAll(pigeon, s, [to]);
  await run.send();
}

describe('relay routes', () => {
  it('the installation lists its relays and routes (GET /config) and each one’s state (/health)', async () => {
    const config = bodyOf(await api(pigeon).system.config(), 200);
    expect(config.relays).toEqual([
      { name: 'a', kind: 'smtp' },
      { name: 'b', kind: 'smtp' },
    ]);
    expect(config.relayRoutes).toEqual({ transactional: ['a'], campaign: ['b'] });
    const health = bodyOf(await api(pigeon).system.health(), 200);
    expect(health.relays?.map((r) => [r.transport, r.state])).toEqual([
      ['a', 'up'],
      ['b', 'up'],
    ]);
    expect(health.mailTransport).toMatchObject({ transport: 'a', lastError: null });
  });

  it('transactional mail goes by its route, campaign mail by its own', async () => {
    const s = await verifiedSender(pigeon, dns);
    const client = api(pigeon, s.auth);
    await client.emails.send({ body: { to: 'tx-1@c.example', from: s.from, subject: 'tx', body: '<p>tx</p>' } });
    await sendCampaign(s, 'cmp-1@c.example');
    expect(await arrivedAt('tx-1@c.example')).toBe('a');
    expect(await arrivedAt('cmp-1@c.example')).toBe('b');
  });

  it('a project’s own route is honoured; a relay the installation does not have is refused', async () => {
    const s = await verifiedSender(pigeon, dns);
    const owner = api(pigeon, { cookie: s.owner.cookie });
    const params = { id: s.project.id };
    const unknown = await owner.users.updateProject({ params, body: { relayRoutes: { transactional: ['a', 'z'] } } });
    expectEnvelope(unknown, 422, 'VALIDATION_ERROR');
    expect((unknown.body as { message: string }).message).toContain('relayRoutes.transactional: no relay named z');

    const updated = await owner.users.updateProject({ params, body: { relayRoutes: { transactional: ['b', 'a'] } } });
    expect(bodyOf(updated, 200).relayRoutes).toEqual({ transactional: ['b', 'a'], campaign: null });
    expect(await relaysOfProject(pigeon.deps, s.project.id)).toEqual([
      { name: 'a', kind: 'smtp', url: a.url, streams: ['transactional'] },
      { name: 'b', kind: 'smtp', url: b.url, streams: ['transactional', 'campaign'] },
    ]);

    const client = api(pigeon, s.auth);
    await client.emails.send({ body: { to: 'own-1@c.example', from: s.from, subject: 'own', body: '<p>own</p>' } });
    expect(await arrivedAt('own-1@c.example')).toBe('b');
    // Its campaign route is still the installation's: B.
    await sendCampaign(s, 'own-cmp@c.example');
    expect(await arrivedAt('own-cmp@c.example')).toBe('b');

    // Back to the installation's route (null).
    const reset = await owner.users.updateProject({ params, body: { relayRoutes: { transactional: null } } });
    expect(bodyOf(reset, 200).relayRoutes).toEqual({ transactional: null, campaign: null });
  });
});
