import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { startDnsServer, type TestDnsServer } from '../../../test/dns-server.js';
import { expectEnvelope, startTestPigeon, type TestPigeon } from '../../../test/helpers.js';

let pigeon: TestPigeon;
let dns: TestDnsServer;
let auth: Record<string, string>;
let publicKey: string;
let counter = 0;

beforeAll(async () => {
  dns = await startDnsServer();
  dns.setTtl(300);
  pigeon = await startTestPigeon({ env: { DNS_SERVERS: dns.address, VERIFY_DNS_TIMEOUT_MS: '300' } });
  const setup = await newProject(pigeon);
  auth = setup.auth;
  publicKey = setup.project.publicKey;
});
afterAll(async () => {
  await pigeon?.stop();
  await dns?.close();
});

/** A fresh domain with a mail server and a website, as most real domains have. */
function mailDomain(label = 'acme') {
  const domain = `${label}-${process.pid}-${++counter}.example`;
  dns.setMx(domain, `10 mx.${domain}`);
  dns.setAddresses(domain, '192.0.2.10');
  dns.setNs(domain, 'ns1.example');
  return domain;
}

async function verify(email: string) {
  const res = await api(pigeon, auth).verify.verify({ body: { email } });
  expect(res.status).toBe(200);
  expect(bodyOf(res, 200).success).toBe(true);
  return bodyOf(res, 200).data;
}

describe('POST /v1/verify', () => {
  it('passes an ordinary address with every flag false and DNS facts true', async () => {
    const domain = mailDomain();
    expect(await verify(`Jane.Doe@${domain.toUpperCase()}`)).toEqual({
      email: `jane.doe@${domain}`,
      valid: true,
      isDisposable: false,
      isAlias: false,
      isTypo: false,
      isPlusAddressed: false,
      isRandomInput: false,
      isPersonalEmail: false,
      domainExists: true,
      hasWebsite: true,
      hasMxRecords: true,
      suggestedEmail: null,
      reasons: ['No problems found'],
    });
  });

  it('flags disposable, alias and personal providers from the offline lists', async () => {
    for (const d of ['mailinator.com', 'duck.com', 'gmail.com', 'alias.anonaddy.com']) {
      dns.setMx(d, `10 mx.${d}`);
    }
    const disposable = await verify('someone@mailinator.com');
    expect(disposable).toMatchObject({ valid: true, isDisposable: true, isPersonalEmail: false, isAlias: false });
    expect(disposable.reasons).toContain('mailinator.com is a disposable email provider');
    expect(await verify('me@duck.com')).toMatchObject({ isAlias: true, isDisposable: false });
    expect(await verify('me@alias.anonaddy.com')).toMatchObject({ isAlias: true });
    const personal = await verify('jane@gmail.com');
    expect(personal).toMatchObject({ isPersonalEmail: true, isDisposable: false, isTypo: false });
  });

  it('suggests the intended address for a misspelt provider, and leaves real TLDs alone', async () => {
    dns.setNxDomain('gmial.com');
    const typo = await verify('jane@gmial.com');
    expect(typo).toMatchObject({ isTypo: true, suggestedEmail: 'jane@gmail.com', valid: false, domainExists: false });
    expect(typo.reasons).toContain('Possible typo: did you mean jane@gmail.com?');
    dns.setMx('hotmail.con', '10 mx.hotmail.con');
    expect(await verify('bob@hotmail.con')).toMatchObject({ isTypo: true, suggestedEmail: 'bob@hotmail.com' });
    const io = `startup-${process.pid}.io`;
    dns.setMx(io, `10 mx.${io}`);
    expect(await verify(`team@${io}`)).toMatchObject({ isTypo: false, suggestedEmail: null });
  });

  it('recognises plus addressing and random input', async () => {
    const domain = mailDomain();
    expect(await verify(`jane+news@${domain}`)).toMatchObject({ isPlusAddressed: true, isRandomInput: false });
    expect(await verify(`xkqzvwpt@${domain}`)).toMatchObject({ isRandomInput: true });
    expect(await verify(`asdfgh@${domain}`)).toMatchObject({ isRandomInput: true });
    expect(await verify(`a8f3k2j9d7x1@${domain}`)).toMatchObject({ isRandomInput: true });
    for (const name of ['john.smith1984', 'christopher', 'info', 'marie-claire']) {
      expect((await verify(`${name}@${domain}`)).isRandomInput).toBe(false);
    }
  });

  it('is invalid when the domain does not exist', async () => {
    const domain = `gone-${process.pid}.example`;
    dns.setNxDomain(domain);
    const result = await verify(`jane@${domain}`);
    expect(result).toMatchObject({ valid: false, domainExists: false, hasMxRecords: false, hasWebsite: false });
    expect(result.reasons).toContain(`The domain ${domain} does not exist`);
  });

  it('falls back to A records without MX, and is invalid with neither or with a null MX', async () => {
    const webOnly = `web-${process.pid}.example`;
    dns.setAddresses(webOnly, '192.0.2.20');
    expect(await verify(`jane@${webOnly}`)).toMatchObject({
      valid: true,
      domainExists: true,
      hasMxRecords: false,
      hasWebsite: true,
    });

    const bare = `bare-${process.pid}.example`;
    dns.setNs(bare, 'ns1.example');
    const none = await verify(`jane@${bare}`);
    expect(none).toMatchObject({ valid: false, domainExists: true, hasMxRecords: false, hasWebsite: false });
    expect(none.reasons[0]).toMatch(/no MX record and no A\/AAAA/);

    const nullMx = `nomail-${process.pid}.example`;
    dns.setMx(nullMx, '0 .');
    dns.setAddresses(nullMx, '192.0.2.30');
    const refused = await verify(`jane@${nullMx}`);
    expect(refused).toMatchObject({ valid: false, hasMxRecords: false, hasWebsite: true });
    expect(refused.reasons[0]).toMatch(/null MX/);
  });

  it('answers with DNS facts unknown (null) when the resolver does not answer, instead of hanging', async () => {
    const domain = `silent-${process.pid}.example`;
    dns.setSilent(domain);
    const started = Date.now();
    const result = await verify(`jane@${domain}`);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result).toMatchObject({ valid: true, domainExists: null, hasMxRecords: null, hasWebsite: null });
    expect(result.reasons[0]).toMatch(/DNS did not answer in time/);
    // Not cached: once the resolver answers again, so does verify.
    dns.setSilent(domain, false);
    dns.setMx(domain, `10 mx.${domain}`);
    expect(await verify(`jane@${domain}`)).toMatchObject({ valid: true, domainExists: true, hasMxRecords: true });
  });

  it('caches DNS answers for their TTL, shared between requests', async () => {
    const domain = mailDomain('cached');
    await verify(`a@${domain}`);
    await verify(`b@${domain}`);
    await Promise.all([verify(`c@${domain}`), verify(`d@${domain}`)]);
    expect(dns.questions(domain, 'MX')).toBe(1);
    expect(dns.questions(domain, 'A')).toBe(1);

    dns.setTtl(1);
    const shortLived = mailDomain('short');
    await verify(`a@${shortLived}`);
    dns.setMx(shortLived);
    dns.setAddresses(shortLived);
    expect((await verify(`b@${shortLived}`)).hasMxRecords).toBe(true);
    await new Promise((r) => setTimeout(r, 1200));
    expect(await verify(`c@${shortLived}`)).toMatchObject({ hasMxRecords: false, hasWebsite: false, valid: false });
    expect(dns.questions(shortLived, 'MX')).toBe(2);
    dns.setTtl(300);
  });

  it('refuses a malformed address with 422 and a public key with 401', async () => {
    const bad = expectEnvelope(
      await api(pigeon, auth).verify.verify({ body: { email: 'not-an-address' } }),
      422,
      'VALIDATION_ERROR',
    );
    expect(bad.errors?.[0]).toMatchObject({ field: 'email', code: 'invalid_string' });
    // untyped: wrong on purpose (a body the contract's types refuse)
    expectEnvelope(await pigeon.request('POST', '/v1/verify', { headers: auth, body: {} }), 422, 'VALIDATION_ERROR');
    const wrongKey = expectEnvelope(
      await api(pigeon, { authorization: `Bearer ${publicKey}` }).verify.verify({
        body: { email: 'jane@example.com' },
      }),
      401,
      'INVALID_API_KEY',
    );
    expect(wrongKey.message).toMatch(/secret key/i);
    expectEnvelope(await api(pigeon).verify.verify({ body: { email: 'jane@example.com' } }), 401, 'UNAUTHORIZED');
  });
});
