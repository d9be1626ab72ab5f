import type { Lookup } from '../../kit/caching-resolver.js';
import type { MailboxGroup } from '../../metrics/registry.js';
import { groupOfMxRecords } from './groups.js';

/** What the groups need of a resolver: `CachingResolver.lookup` (its cache honours each answer's TTL). */
export interface MxResolver {
  lookup(name: string, type: 'MX'): Promise<Lookup>;
}

/** How long a domain's group is kept here: its MX hosts rarely move to another provider. */
const KEEP_MS = 10 * 60_000;
/** A domain whose MX lookup failed (timeout, server error) counts as `other` for this long before it is asked again. */
const RETRY_FAILED_MS = 60_000;
const MAX_DOMAINS = 50_000;
/** How long a message waits for its domain's first lookup; past it, it goes as `other` (the answer still lands in the map). */
const WAIT_MS = 250;

/**
 * The destination group of a recipient domain, by its MX hosts, asked once per domain and kept in
 * a map per process: the hot path asks the map, a domain not in it costs one MX lookup (shared by
 * the concurrent messages to it), waited for at most 250 ms: a resolver that does not answer in time
 * never holds a message longer, and a lookup that fails answers `other` and is retried a minute later.
 */
export function mxGroups(resolver: MxResolver) {
  const known = new Map<string, { group: MailboxGroup; until: number }>();
  const pending = new Map<string, Promise<MailboxGroup>>();
  const ask = async (domain: string): Promise<MailboxGroup> => {
    const found = await resolver.lookup(domain, 'MX').catch((): Lookup => ({ status: 'error', records: [] }));
    const failed = found.status === 'timeout' || found.status === 'error';
    const group = found.status === 'answer' ? groupOfMxRecords(found.records) : 'other';
    if (known.size >= MAX_DOMAINS) known.clear();
    known.set(domain, { group, until: Date.now() + (failed ? RETRY_FAILED_MS : KEEP_MS) });
    return group;
  };
  return (address: string): MailboxGroup | Promise<MailboxGroup> => {
    const domain = (address.split('@')[1] ?? '').toLowerCase();
    const hit = known.get(domain);
    if (hit && hit.until > Date.now()) return hit.group;
    let query = pending.get(domain);
    if (!query) {
      query = ask(domain).finally(() => pending.delete(domain));
      pending.set(domain, query);
    }
    return meanwhile(query);
  };
}

/** The lookup's answer, or `other` once it has taken WAIT_MS. */
function meanwhile(query: Promise<MailboxGroup>): Promise<MailboxGroup> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<MailboxGroup>((resolve) => {
    timer = setTimeout(() => resolve('other'), WAIT_MS);
  });
  return Promise.race([query, late]).finally(() => clearTimeout(timer));
}
