import { Resolver } from 'node:dns/promises';
import type { DnsRecordPurpose, DnsRecordStatus } from '@pigeon/contract';
import { dkimRecordValue } from './dkim.js';

export interface DomainRecords {
  domain: string;
  dkim_selector: string;
  dkim_public_key: string;
}

/**
 * The records a domain should publish, in the order they are shown. The DMARC suggestion's `rua`
 * is Pigeon's report address when the inbound receiver takes reports (`reportAddress`).
 */
export function expectedRecords(d: DomainRecords, reportAddress: string | null = null) {
  return [
    {
      type: 'TXT' as const,
      name: `${d.dkim_selector}._domainkey.${d.domain}`,
      value: dkimRecordValue(d.dkim_public_key),
      purpose: 'dkim' as const,
      required: true,
    },
    { type: 'TXT' as const, name: d.domain, value: 'v=spf1 a mx ~all', purpose: 'spf' as const, required: false },
    {
      type: 'TXT' as const,
      name: `_dmarc.${d.domain}`,
      value: `v=DMARC1; p=none; rua=mailto:${reportAddress ?? `dmarc@${d.domain}`}`,
      purpose: 'dmarc' as const,
      required: false,
    },
  ];
}

/** A resolver on `DNS_SERVERS` when given (tests run their own), with short timeouts. */
export function createResolver(servers: string[] | undefined): Resolver {
  const resolver = new Resolver({ timeout: 2000, tries: 2 });
  if (servers?.length) resolver.setServers(servers);
  return resolver;
}

async function txt(resolver: Resolver, name: string): Promise<string[]> {
  try {
    return (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
  } catch {
    return []; // NXDOMAIN, no data, timeout: the record is not (yet) visible
  }
}

const normalise = (value: string) => value.replace(/\s+/g, '').toLowerCase();

/**
 * Looks the records up. DKIM passes when a TXT at the selector publishes our public key; SPF and
 * DMARC pass when a record of their kind exists (their content is the owner's policy).
 */
export async function checkRecords(
  resolver: Resolver,
  d: DomainRecords,
): Promise<Record<DnsRecordPurpose, DnsRecordStatus>> {
  const [dkim, spf, dmarc] = await Promise.all([
    txt(resolver, `${d.dkim_selector}._domainkey.${d.domain}`),
    txt(resolver, d.domain),
    txt(resolver, `_dmarc.${d.domain}`),
  ]);
  const key = normalise(`p=${d.dkim_public_key}`);
  return {
    dkim: dkim.length === 0 ? 'missing' : dkim.some((r) => normalise(r).includes(key)) ? 'verified' : 'mismatch',
    spf: spf.some((r) => r.toLowerCase().startsWith('v=spf1')) ? 'verified' : 'missing',
    dmarc: dmarc.some((r) => r.toLowerCase().startsWith('v=dmarc1')) ? 'verified' : 'missing',
  };
}
