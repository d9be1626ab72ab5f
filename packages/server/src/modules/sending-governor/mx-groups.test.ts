import { afterAll, expect, it } from 'vitest';
import { startDnsServer } from '../../../test/dns-server.js';
import { CachingResolver } from '../../kit/caching-resolver.js';
import { mxGroups } from './mx-groups.js';

const dns = await startDnsServer();
afterAll(() => dns.close());
const resolver = new CachingResolver({ servers: [dns.address], timeoutMs: 5000, maxEntries: 100 });

it('groups a recipient by its domain’s MX hosts, asking DNS once per domain', async () => {
  dns.setMx('yahoo-test.example', '1 mta5.am0.yahoodns.net');
  dns.setMx('ms-test.example', '10 ms-test-example.mail.protection.outlook.com');
  const groupOf = mxGroups(resolver);
  expect(await groupOf('a@yahoo-test.example')).toBe('yahoo');
  expect(await groupOf('b@YAHOO-test.example')).toBe('yahoo');
  expect(await groupOf('c@ms-test.example')).toBe('microsoft');
  expect(await groupOf('d@no-mx-test.example')).toBe('other');
  expect(dns.questions('yahoo-test.example', 'MX')).toBe(1);
  // Known now: answered from the map, no promise to wait for.
  expect(groupOf('e@yahoo-test.example')).toBe('yahoo');
});

it('sends mail to a domain whose DNS does not answer as other, without waiting for the resolver', async () => {
  dns.setSilent('silent-test.example');
  const groupOf = mxGroups(resolver);
  expect(await groupOf('a@silent-test.example')).toBe('other');
});
