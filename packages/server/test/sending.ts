import { afterAll, beforeAll, expect } from 'vitest';
import { newProject } from './accounts.js';
import { startDnsServer, type TestDnsServer } from './dns-server.js';
import { startTestPigeon, type TestPigeon } from './helpers.js';
import { type SmtpSink, startSmtpSink } from './smtp-sink.js';

let domainCounter = 0;

/** A project with a domain whose DKIM record is published on the test DNS server and checked. */
export async function verifiedSender(pigeon: TestPigeon, dns: TestDnsServer) {
  const setup = await newProject(pigeon);
  const domain = `mail${++domainCounter}-${process.pid}.example.com`;
  const created = await pigeon.request('POST', '/domains', { headers: setup.auth, body: { domain } });
  for (const record of created.body.records) dns.setTxt(record.name, record.value);
  const verified = await pigeon.request('GET', `/domains/${created.body.id}/verify`, { headers: setup.auth });
  expect(verified.body.status).toBe('verified');
  return { ...setup, domain, from: `hello@${domain}` };
}

/**
 * For a test file: a Pigeon delivering to a real SMTP sink, with a real DNS server for domain
 * verification, started before the file's tests and stopped after. Read the fields inside tests.
 */
export function pigeonWithSmtpSink(env: Record<string, string> = {}) {
  const setup = {} as { pigeon: TestPigeon; sink: SmtpSink; dns: TestDnsServer };
  beforeAll(async () => {
    [setup.sink, setup.dns] = await Promise.all([startSmtpSink(), startDnsServer()]);
    setup.pigeon = await startTestPigeon({
      env: { SMTP_URL: setup.sink.url, DNS_SERVERS: setup.dns.address, DELIVERY_RETRY_BASE_MS: '100', ...env },
    });
  });
  afterAll(async () => {
    await setup.pigeon?.stop();
    await Promise.all([setup.sink?.close(), setup.dns?.close()]);
  });
  return setup;
}
