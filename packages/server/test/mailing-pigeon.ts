import { afterAll } from 'vitest';
import { startDnsServer, type TestDnsServer } from './dns-server.js';
import { createTestDatabase, startTestPigeon, type TestPigeon } from './helpers.js';
import { type SmtpSink, startSmtpSink } from './smtp-sink.js';

export interface MailingPigeon {
  pigeon: TestPigeon;
  /** Where Pigeon delivers (`SMTP_URL`). */
  sink: SmtpSink;
  /** What Pigeon resolves with (`DNS_SERVERS`): publish a sender domain's records here to verify it. */
  dns: TestDnsServer;
}

/**
 * The one set-up for a test file that sends mail: a real SMTP sink, a real DNS server and a Pigeon
 * wired to both, all stopped after the file. Call it at the top level of the file:
 * `const { pigeon, sink, dns } = await startMailingPigeon({ CHANGE_FEED_POLL_MS: '20' });`
 * With `role: 'api'` it runs no loops: the test starts `pigeon worker` processes with its `env`.
 */
export async function startMailingPigeon(
  env: Record<string, string> = {},
  opts: { role?: 'api' } = {},
): Promise<MailingPigeon & { databaseUrl: string; env: Record<string, string> }> {
  const [sink, dns, databaseUrl] = await Promise.all([startSmtpSink(), startDnsServer(), createTestDatabase()]);
  let pigeon: TestPigeon | undefined;
  afterAll(async () => {
    await pigeon?.stop();
    await Promise.all([sink.close(), dns.close()]);
  });
  const wired = { SMTP_URL: sink.url, DNS_SERVERS: dns.address, ...env };
  pigeon = await startTestPigeon({ databaseUrl, role: opts.role, env: wired });
  // What a `pigeon worker` process beside it needs to share its database, relay and resolver.
  return { pigeon, sink, dns, databaseUrl, env: { DATABASE_URL: databaseUrl, ...wired } };
}

export interface RelayedPigeon {
  pigeon: TestPigeon;
  /** One SMTP sink per relay name, each its own relay (`RELAYS=a=smtp://…,b=smtp://…`). */
  sinks: Record<string, SmtpSink>;
  dns: TestDnsServer;
}

/**
 * A Pigeon with several relays, each a real SMTP sink that can be stopped (an outage) and restarted:
 * `const { pigeon, sinks, dns } = await startRelayedPigeon(['a', 'b'], { RELAY_ROUTE_CAMPAIGN: 'b,a' });`
 */
export async function startRelayedPigeon(names: string[], env: Record<string, string> = {}): Promise<RelayedPigeon> {
  const [dns, ...started] = await Promise.all([startDnsServer(), ...names.map(() => startSmtpSink())]);
  const sinks = Object.fromEntries(names.map((name, i) => [name, started[i] as SmtpSink]));
  let pigeon: TestPigeon | undefined;
  afterAll(async () => {
    await pigeon?.stop();
    await Promise.all([...started.map((s) => s.close()), dns.close()]);
  });
  const relays = names.map((name) => `${name}=${sinks[name]?.url}`).join(',');
  pigeon = await startTestPigeon({ env: { RELAYS: relays, DNS_SERVERS: dns.address, ...env } });
  return { pigeon, sinks, dns };
}
