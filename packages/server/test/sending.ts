import { expect } from 'vitest';
import { newProject } from './accounts.js';
import { api, bodyOf } from './api.js';
import type { TestDnsServer } from './dns-server.js';
import type { TestPigeon } from './helpers.js';

let domainCounter = 0;

/** A project with a domain whose DKIM record is published on the test DNS server and checked. */
export async function verifiedSender(pigeon: TestPigeon, dns: TestDnsServer) {
  const setup = await newProject(pigeon);
  const domain = `mail${++domainCounter}-${process.pid}.example.com`;
  const domains = api(pigeon, setup.auth).domains;
  const created = bodyOf(await domains.create({ body: { domain } }), 201);
  for (const record of created.records) dns.setTxt(record.name, record.value);
  const verified = await domains.verify({ params: { id: created.id } });
  expect(bodyOf(verified, 200).status).toBe('verified');
  return { ...setup, domain, from: `hello@${domain}` };
}
