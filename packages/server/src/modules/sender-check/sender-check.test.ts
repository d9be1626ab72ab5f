import { generateKeyPairSync } from 'node:crypto';
import { SenderCheckRuleId } from '@pigeon/contract';
import { assert, describe, expect, it } from 'vitest';
import { newProject } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { expectEnvelope } from '../../../test/helpers.js';
import { mailOf } from '../../../test/mail.js';
import { startMailingPigeon } from '../../../test/mailing-pigeon.js';
import { verifiedSender } from '../../../test/sending.js';
import { until } from '../../../test/until.js';
import { queryRows, sql } from '../../db/query.js';
import { oneClickUnsubscribeRule, relayTlsRule } from './mail-rules.js';

const BOUNCE_DOMAIN = 'bounces.pigeon.test';
const { pigeon, sink, dns } = await startMailingPigeon({ BOUNCE_DOMAIN, HEALTH_MIN_SAMPLE: '2' });
dns.setMx(BOUNCE_DOMAIN, `10 mx.${BOUNCE_DOMAIN}`);

type Sender = Awaited<ReturnType<typeof verifiedSender>>;

/** A sender whose DNS is what Pigeon asks for: DKIM, an SPF record authorising the relay (the sink on 127.0.0.1), DMARC p=reject. */
async function wellConfigured() {
  const sender = await verifiedSender(pigeon, dns);
  dns.setTxt('_spf.relay.pigeon.test', 'v=spf1 ip4:127.0.0.1 -all');
  dns.setTxt(sender.domain, 'v=spf1 include:_spf.relay.pigeon.test ~all');
  dns.setTxt(`_dmarc.${sender.domain}`, `v=DMARC1; p=reject; rua=mailto:dmarc@${sender.domain}`);
  return sender;
}

async function check(sender: Sender) {
  const [domain] = bodyOf(
    await api(pigeon, sender.auth).domains.list({ params: { projectId: sender.project.id } }),
    200,
  );
  assert(domain);
  return bodyOf(await api(pigeon, sender.auth).senderCheck.check({ params: { id: domain.id } }), 200);
}

const ruleOf = (result: Awaited<ReturnType<typeof check>>, id: SenderCheckRuleId) => {
  const rule = result.rules.find((r) => r.id === id);
  assert(rule, `rule ${id}`);
  return rule;
};

const DNS_RULES: SenderCheckRuleId[] = ['spf', 'dkim', 'dmarc_policy', 'dmarc_alignment', 'return_path_mx'];

describe('GET /domains/:id/check', () => {
  it('passes every DNS rule for a well-configured domain, and names the other rules in order', async () => {
    const result = await check(await wellConfigured());
    expect(result.rules.map((r) => r.id)).toEqual(SenderCheckRuleId.options);
    for (const id of DNS_RULES) expect(ruleOf(result, id)).toMatchObject({ status: 'pass', fix: null });
    expect(ruleOf(result, 'return_path_mx').detail).toContain(`mx.${BOUNCE_DOMAIN}`);
    // Composition adds the one-click headers; PUBLIC_URL here is http://, which Gmail does not take.
    expect(ruleOf(result, 'one_click_unsubscribe')).toMatchObject({ status: 'warn' });
    expect(ruleOf(result, 'one_click_unsubscribe').fix).toContain('PUBLIC_URL');
    // A new project has sent nothing: too few messages to judge.
    expect(ruleOf(result, 'complaint_rate')).toMatchObject({ status: 'pass' });
    expect(ruleOf(result, 'complaint_rate').detail).toContain('too few');
    // The sink is the one relay (`smtp`, SMTP_URL): plain SMTP on this host, STARTTLS not required.
    expect(ruleOf(result, 'relay_tls')).toMatchObject({ status: 'warn' });
    expect(ruleOf(result, 'relay_tls').detail).toMatch(
      /^smtp: STARTTLS only if the relay offers it \(127\.0\.0\.1:\d+, on this host\)$/,
    );
    expect(result.status).toBe('warn');
  });

  it('fails a missing DMARC record and warns on p=none, with the record to publish', async () => {
    const sender = await wellConfigured();
    dns.setTxt(`_dmarc.${sender.domain}`);
    const missing = ruleOf(await check(sender), 'dmarc_policy');
    expect(missing).toMatchObject({ status: 'fail', detail: `No DMARC record at _dmarc.${sender.domain}` });
    expect(missing.fix).toContain(`Publish one TXT _dmarc.${sender.domain} "v=DMARC1; p=quarantine;`);

    dns.setTxt(`_dmarc.${sender.domain}`, 'v=DMARC1; p=none');
    const monitoring = ruleOf(await check(sender), 'dmarc_policy');
    expect(monitoring.status).toBe('warn');
    expect(monitoring.detail).toContain('p=none');
    expect(monitoring.fix).toContain('p=quarantine');

    dns.setTxt(`_dmarc.${sender.domain}`, 'v=DMARC1; p=quarantine; pct=20');
    expect(ruleOf(await check(sender), 'dmarc_policy')).toMatchObject({ status: 'warn' });
  });

  it('fails SPF that is missing, does not authorise the relay, or is doubled, with the fix', async () => {
    const sender = await wellConfigured();
    dns.setTxt('_spf.elsewhere.pigeon.test', 'v=spf1 ip4:10.1.2.3 -all');
    dns.setTxt(sender.domain, 'v=spf1 include:_spf.elsewhere.pigeon.test ~all');
    const unauthorised = ruleOf(await check(sender), 'spf');
    expect(unauthorised.status).toBe('fail');
    expect(unauthorised.detail).toContain('does not authorise the relay smtp (127.0.0.1: softfail)');
    expect(unauthorised.fix).toBe(
      'Add ip4:127.0.0.1 to the record (before its all), or the include: your relay documents',
    );

    dns.setTxt(sender.domain);
    const missing = ruleOf(await check(sender), 'spf');
    expect(missing).toMatchObject({ status: 'fail', detail: `${sender.domain} publishes no SPF record` });
    expect(missing.fix).toContain(`Publish TXT ${sender.domain} "v=spf1`);

    dns.setTxt(sender.domain, 'v=spf1 ip4:127.0.0.1 ~all', 'v=spf1 mx ~all');
    expect(ruleOf(await check(sender), 'spf')).toMatchObject({ status: 'fail', fix: expect.stringContaining('Merge') });
  });

  it('fails DKIM and alignment when the published key is not Pigeon’s', async () => {
    const sender = await wellConfigured();
    const [domain] = bodyOf(
      await api(pigeon, sender.auth).domains.list({ params: { projectId: sender.project.id } }),
      200,
    );
    const dkim = domain?.records.find((r) => r.purpose === 'dkim');
    assert(dkim);
    const other = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'der' });
    dns.setTxt(dkim.name, `v=DKIM1; k=rsa; p=${other.toString('base64')}`);
    const result = await check(sender);
    const rule = ruleOf(result, 'dkim');
    expect(rule.status).toBe('fail');
    expect(rule.detail).toContain('is not the key Pigeon signs with');
    expect(rule.fix).toBe(`Publish TXT ${dkim.name} with the value ${dkim.value}`);
    // The return path (BOUNCE_DOMAIN) is not under the sender domain: nothing else aligns.
    expect(ruleOf(result, 'dmarc_alignment')).toMatchObject({ status: 'fail' });
    expect(result.status).toBe('fail');
  });

  it("judges the project health window's rates: a hard bounce in two messages fails the bounce rate", async () => {
    const sender = await wellConfigured();
    const bounced = `gone-${process.pid}@example.com`;
    sink.failFor(bounced, 550);
    for (const to of [bounced, `here-${process.pid}@example.com`]) {
      const sent = await api(pigeon, sender.auth).emails.send({
        body: { from: sender.from, to, subject: 'Hi', body: '<p>Hi</p>' },
      });
      const [email] = bodyOf(sent, 200).data.emails;
      assert(email);
      if (to !== bounced) await mailOf(sink, email.email);
    }
    const bouncedCount = () =>
      queryRows<{ n: number }>(
        pigeon.deps.db.pool,
        sql`SELECT count(bounced_at)::int AS n FROM emails WHERE project_id = ${sender.project.id}`,
      );
    expect((await until(bouncedCount, (rows) => rows[0]?.n === 1))[0]?.n).toBe(1);
    sink.failFor(bounced, null);
    const result = await check(sender);
    expect(ruleOf(result, 'bounce_rate')).toMatchObject({ status: 'fail' });
    expect(ruleOf(result, 'bounce_rate').detail).toBe("50.00% over the project's last 2 messages, at or above 5.00%");
    expect(ruleOf(result, 'complaint_rate')).toMatchObject({ status: 'pass', fix: null });
  });

  it("answers 404 for another project's domain", async () => {
    const sender = await wellConfigured();
    const [domain] = bodyOf(
      await api(pigeon, sender.auth).domains.list({ params: { projectId: sender.project.id } }),
      200,
    );
    assert(domain);
    const other = await newProject(pigeon);
    expectEnvelope(await api(pigeon, other.auth).senderCheck.check({ params: { id: domain.id } }), 404, 'NOT_FOUND');
  });
});

describe('relay TLS and one-click unsubscribe rules', () => {
  it('passes implicit TLS, required STARTTLS and SES; fails a remote relay without required TLS', () => {
    const smtp = (url: string) => relayTlsRule([{ name: 'main', kind: 'smtp', url }]).status;
    expect(smtp('smtps://relay.example.com:465')).toBe('pass');
    expect(smtp('smtp://relay.example.com:587?requireTLS=true')).toBe('pass');
    expect(smtp('smtp://relay.example.com:587')).toBe('fail');
    expect(smtp('smtp://relay.example.com:587?requireTLS=true&ignoreTLS=true')).toBe('fail');
    expect(smtp('smtp://127.0.0.1:2525')).toBe('warn');
    expect(relayTlsRule([{ name: 'ses', kind: 'ses' }]).status).toBe('pass');
    const both = relayTlsRule([
      { name: 'main', kind: 'smtp', url: 'smtps://relay.example.com:465' },
      { name: 'backup', kind: 'smtp', url: 'smtp://backup.example.com:587' },
    ]);
    expect(both.status).toBe('fail');
    expect(both.detail).toBe(
      'main: implicit TLS (relay.example.com:465); backup: STARTTLS only if the relay offers it (backup.example.com:587)',
    );
  });

  it('passes one-click unsubscribe when campaign composition adds both headers on an HTTPS URL', () => {
    const rule = oneClickUnsubscribeRule({ publicUrl: 'https://pigeon.example.com', linkSecret: 's'.repeat(32) });
    expect(rule).toMatchObject({ id: 'one_click_unsubscribe', status: 'pass', fix: null });
  });
});
