import type { AppDeps } from '../../deps.js';
import { CachingResolver } from '../../kit/caching-resolver.js';
import { createGovernor, type Governor } from '../sending-governor/public.js';

/** Recipient domains whose MX answers a process keeps (the resolver's LRU; each for its TTL). */
const MX_CACHE_ENTRIES = 20_000;

/**
 * The delivery workers' governor (modules/sending-governor), with its own caching resolver on
 * `DNS_SERVERS`. With the local outbox no mail reaches a provider: recipients are not looked up.
 */
export function startGovernor(deps: Pick<AppDeps, 'config' | 'db' | 'mailer'>): Governor {
  const resolver = new CachingResolver({
    servers: deps.config.dns.servers,
    timeoutMs: deps.config.verify.dnsTimeoutMs,
    maxEntries: MX_CACHE_ENTRIES,
  });
  return createGovernor(
    {
      pool: deps.db.pool,
      config: deps.config.governor,
      classifyRecipients: deps.mailer.kind !== 'outbox',
      lifetimeMs: deps.config.delivery.lifetimeMs,
    },
    resolver,
  );
}
