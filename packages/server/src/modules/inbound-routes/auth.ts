import { Resolver } from 'node:dns/promises';
import { authenticate } from 'mailauth';

export interface Verdicts {
  spf: string;
  dkim: string;
  dmarc: string;
}

/** How the message arrived: what SPF is checked against. */
export interface Arrival {
  ip: string;
  helo: string;
  /** MAIL FROM (empty for a null sender). */
  sender: string;
  /** Pigeon's own name as the receiving MTA. */
  mta: string;
}

/** A check's result word; a check that did not run (`false`) found nothing to check: `none`. */
const verdictOf = (check: false | { status?: { result?: string | false } }) =>
  (check === false ? undefined : check.status?.result) || 'none';

type Lookup = (name: string, rrtype: string) => Promise<unknown>;

/** A resolver for mailauth on the configured DNS servers (DNS_SERVERS), failing fast. */
export function authResolver(servers: string[] | undefined): Lookup {
  const resolver = new Resolver({ timeout: 2_000, tries: 2 });
  if (servers?.length) resolver.setServers(servers);
  return (name, rrtype) => resolver.resolve(name, rrtype) as Promise<unknown>;
}

/**
 * SPF (the connection's IP and HELO, the MAIL FROM), DKIM (`pass` when one signature passed,
 * else the first result) and DMARC of an arriving message, checked with mailauth. A check that
 * cannot run says `temperror` rather than failing the delivery.
 */
export async function verifyArrival(raw: Buffer, arrival: Arrival, resolver: Lookup): Promise<Verdicts> {
  try {
    const result = await authenticate(raw, {
      ip: arrival.ip,
      helo: arrival.helo,
      sender: arrival.sender,
      mta: arrival.mta,
      resolver: resolver as never,
      disableArc: true,
      disableBimi: true,
    });
    const dkim = result.dkim?.results ?? [];
    const passed = dkim.some((r: { status?: { result?: string } }) => r.status?.result === 'pass');
    return {
      spf: verdictOf(result.spf),
      dkim: passed ? 'pass' : (dkim[0]?.status?.result ?? 'none'),
      dmarc: verdictOf(result.dmarc),
    };
  } catch {
    return { spf: 'temperror', dkim: 'temperror', dmarc: 'temperror' };
  }
}
