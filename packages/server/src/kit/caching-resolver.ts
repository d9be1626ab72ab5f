import { getServers } from 'node:dns';
import { isIPv6 } from 'node:net';
import dns2 from 'dns2';
import { LRUCache } from 'lru-cache';

export type RecordType = 'MX' | 'A' | 'AAAA' | 'NS';

/**
 * What one question got: records (`answer`), none of that type (`nodata`: the name exists), no
 * such name (`nxdomain`), or nothing usable in time (`timeout`, `error`: unknown, never cached).
 */
export interface Lookup {
  status: 'answer' | 'nodata' | 'nxdomain' | 'timeout' | 'error';
  /** MX: `priority exchange` ("." for a null MX); A/AAAA: addresses; NS: host names. */
  records: string[];
}

const RCODE_NXDOMAIN = 3;
/** Negative answers without an SOA to say how long (RFC 2308), and a ceiling for every TTL. */
const DEFAULT_NEGATIVE_TTL_S = 60;
const MAX_TTL_S = 3600;

const NODE_DNS_CODES: Record<Exclude<Lookup['status'], 'answer'>, string> = {
  nodata: 'ENODATA',
  nxdomain: 'ENOTFOUND',
  timeout: 'ETIMEOUT',
  error: 'ESERVFAIL',
};

interface Server {
  address: string;
  port: number;
}

/** `1.2.3.4`, `1.2.3.4:53`, `::1`, `[::1]:5353` → address and port. */
export function parseServer(spec: string): Server {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(spec);
  if (bracketed?.[1]) return { address: bracketed[1], port: Number(bracketed[2] ?? 53) };
  if (isIPv6(spec)) return { address: spec, port: 53 };
  const [address = spec, port] = spec.split(':');
  return { address, port: Number(port ?? 53) };
}

type Answer = { type: number; ttl: number; address?: string; exchange?: string; priority?: number; ns?: string };
type SoaRecord = { type: number; ttl: number; minimum?: number };

function recordOf(type: RecordType, a: Answer): string | undefined {
  if (type === 'MX') return `${a.priority ?? 0} ${a.exchange === '' ? '.' : (a.exchange ?? '.')}`;
  if (type === 'NS') return a.ns;
  return a.address;
}

/**
 * A DNS client for address verification and webhook targets: asks the configured servers
 * (`DNS_SERVERS`, else the system's) over UDP with a timeout per try, one server after the other,
 * and keeps answers in one LRU cache shared by every request of the process for as long as their
 * TTL says (negative answers: the SOA minimum, RFC 2308). Concurrent questions for the same name and type share one
 * query. Timeouts and errors are not cached, so the next request asks again.
 */
export class CachingResolver {
  private readonly servers: Server[];
  private readonly cache: LRUCache<string, Lookup>;
  private readonly inFlight = new Map<string, Promise<Lookup>>();
  private queries = 0;

  constructor(opts: { servers: string[] | undefined; timeoutMs: number; maxEntries: number }) {
    this.servers = (opts.servers?.length ? opts.servers : getServers()).map(parseServer);
    this.timeoutMs = opts.timeoutMs;
    this.cache = new LRUCache({ max: opts.maxEntries });
  }

  private readonly timeoutMs: number;

  /** How many questions went to a server (not answered from the cache). */
  get sentQueries(): number {
    return this.queries;
  }

  /** `HostResolver` (webhooks): the addresses of an A lookup, cached like any other. */
  resolve4 = (name: string) => this.addresses(name, 'A');
  /** `HostResolver` (webhooks): the addresses of an AAAA lookup. */
  resolve6 = (name: string) => this.addresses(name, 'AAAA');

  /** Rejects, with the code `node:dns` would give, when the name has no such addresses. */
  private async addresses(name: string, type: 'A' | 'AAAA'): Promise<string[]> {
    const found = await this.lookup(name, type);
    if (found.status === 'answer') return found.records;
    throw Object.assign(new Error(`${type} ${name}: ${found.status}`), { code: NODE_DNS_CODES[found.status] });
  }

  lookup(name: string, type: RecordType): Promise<Lookup> {
    const key = `${type} ${name.toLowerCase()}`;
    const cached = this.cache.get(key);
    if (cached) return Promise.resolve(cached);
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const query = this.ask(name, type)
      .then(({ lookup, ttlS }) => {
        if (ttlS > 0 && lookup.status !== 'timeout' && lookup.status !== 'error') {
          this.cache.set(key, lookup, { ttl: Math.min(ttlS, MAX_TTL_S) * 1000 });
        }
        return lookup;
      })
      .finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, query);
    return query;
  }

  private async ask(name: string, type: RecordType): Promise<{ lookup: Lookup; ttlS: number }> {
    let last: Lookup['status'] = 'error';
    for (const server of this.servers) {
      this.queries++;
      const resolve = dns2.UDPClient({
        dns: server.address,
        port: server.port,
        timeout: this.timeoutMs,
        socketType: isIPv6(server.address) ? 'udp6' : 'udp4',
        retryOverTCP: false,
      } as never) as unknown as (n: string, t: string) => Promise<dns2.Packet>;
      try {
        return interpret(await resolve(name, type), type);
      } catch (err) {
        last = (err as { code?: string }).code === 'ETIMEDOUT' ? 'timeout' : 'error';
      }
    }
    return { lookup: { status: last, records: [] }, ttlS: 0 };
  }
}

function interpret(packet: dns2.Packet, type: RecordType): { lookup: Lookup; ttlS: number } {
  const header = packet.header as unknown as { rcode: number };
  const wanted = dns2.Packet.TYPE[type];
  const answers = (packet.answers as unknown as Answer[]).filter((a) => a.type === wanted);
  if (header.rcode === 0 && answers.length > 0) {
    const records = answers.map((a) => recordOf(type, a)).filter((r): r is string => r !== undefined);
    return { lookup: { status: 'answer', records }, ttlS: Math.min(...answers.map((a) => a.ttl)) };
  }
  if (header.rcode !== 0 && header.rcode !== RCODE_NXDOMAIN)
    return { lookup: { status: 'error', records: [] }, ttlS: 0 };
  const soa = (packet.authorities as unknown as SoaRecord[]).find((r) => r.type === dns2.Packet.TYPE.SOA);
  const ttlS = soa ? Math.min(soa.ttl, soa.minimum ?? soa.ttl) : DEFAULT_NEGATIVE_TTL_S;
  return { lookup: { status: header.rcode === RCODE_NXDOMAIN ? 'nxdomain' : 'nodata', records: [] }, ttlS };
}
