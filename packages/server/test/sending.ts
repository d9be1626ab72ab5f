import { expect } from 'vitest';
import { newProject } from './accounts.js';
import type { TestDnsServer } from './dns-server.js';
import type { TestPigeon } from './helpers.js';

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
