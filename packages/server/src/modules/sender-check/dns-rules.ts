import type { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { MailTransportKind, SenderCheckRule } from '@pigeon/contract';
import { spf } from 'mailauth';
import type { z } from 'zod';
import { checkRecords, type DomainRecords, expectedRecords } from '../domains/public.js';

export type Rule = z.infer<typeof SenderCheckRule>;

/** A relay the project's mail can leave through (`relaysOfProject`): what SPF and TLS are checked against. */
export interface RelayTarget {
  name: string;
  kind: MailTransportKind;
  /** An SMTP relay's URL. */
  url?: string;
}

/** Amazon SES sends from its own addresses; its documented SPF mechanism. */
const SES_SPF = 'include:amazonses.com';

async function txt(resolver: Resolver, name: string): Promise<string[]> {
  try {
    return (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
  } catch {
    return []; // NXDOMAIN, no data, timeout: not visible
  }
}

const pass = (id: Rule['id'], detail: string): Rule => ({ id, status: 'pass', detail, fix: null });

export async function dkimRule(resolver: Resolver, d: DomainRecords): Promise<Rule> {
  const { dkim } = await checkRecords(resolver, d);
  if (dkim === 'verified') return pass('dkim', `${d.dkim_selector}._domainkey.${d.domain} publishes Pigeon's key`);
  const record = expectedRecords(d)[0];
  return {
    id: 'dkim',
    status: 'fail',
    detail:
      dkim === 'missing'
        ? `No DKIM record at ${d.dkim_selector}._domainkey.${d.domain}`
        : `The DKIM record at ${d.dkim_selector}._domainkey.${d.domain} is not the key Pigeon signs with`,
    fix: `Publish TXT ${record?.name} with the value ${record?.value}`,
  };
}

/** The address an SMTP relay is reached at, or undefined when it does not resolve. */
async function relayAddress(resolver: Resolver, url: string): Promise<string | undefined> {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return host;
  const found = await resolver.resolve4(host).catch(() => [] as string[]);
  return found[0];
}

/**
 * The sender domain's SPF record: one, not `+all`, and authorising every relay the project's mail
 * can use (Amazon SES by its include; an SMTP relay by its address, evaluated with mailauth as a
 * receiver would).
 */
export async function spfRule(resolver: Resolver, domain: string, relays: RelayTarget[]): Promise<Rule> {
  const records = (await txt(resolver, domain)).filter((r) => /^v=spf1(\s|$)/i.test(r));
  const wanted = relays.some((r) => r.kind === 'ses') ? `${SES_SPF} ` : '';
  if (records.length === 0) {
    return {
      id: 'spf',
      status: 'fail',
      detail: `${domain} publishes no SPF record`,
      fix: `Publish TXT ${domain} "v=spf1 ${wanted}a mx ~all" (with the mechanisms your relay documents)`,
    };
  }
  if (records.length > 1) {
    return {
      id: 'spf',
      status: 'fail',
      detail: `${domain} publishes ${records.length} SPF records: receivers treat that as an error (permerror)`,
      fix: 'Merge them into one TXT record starting with v=spf1',
    };
  }
  const record = records[0] as string;
  if (/(^|\s)\+?all(\s|$)/i.test(record)) {
    return {
      id: 'spf',
      status: 'fail',
      detail: `The SPF record of ${domain} ends in +all: it authorises every server on the internet`,
      fix: 'End the record with ~all or -all',
    };
  }
  const unauthorised = await unauthorisedRelays(resolver, domain, record, relays);
  if (unauthorised.length > 0) {
    return {
      id: 'spf',
      status: 'fail',
      detail: `The SPF record of ${domain} ("${record}") does not authorise ${unauthorised.map((u) => u.what).join(', ')}`,
      // An SMTP relay is judged by the address Pigeon connects to; a provider may send from others.
      fix: `Add ${unauthorised.map((u) => u.mechanism).join(' ')} to the record (before its all), or the include: your relay documents`,
    };
  }
  return pass('spf', `${domain}: "${record}" authorises the relays its mail can use`);
}

async function unauthorisedRelays(resolver: Resolver, domain: string, record: string, relays: RelayTarget[]) {
  const missing: Array<{ what: string; mechanism: string }> = [];
  for (const relay of relays) {
    if (relay.kind === 'ses' && !record.toLowerCase().split(/\s+/).includes(SES_SPF)) {
      missing.push({ what: `Amazon SES (relay ${relay.name})`, mechanism: SES_SPF });
    }
    if (relay.kind !== 'smtp' || !relay.url) continue;
    const ip = await relayAddress(resolver, relay.url);
    if (!ip) continue;
    const result = await spf({
      sender: `postmaster@${domain}`,
      ip,
      helo: domain,
      mta: 'pigeon',
      resolver: (name: string, type: string) => resolver.resolve(name, type) as Promise<never>,
    });
    if (result.status.result !== 'pass') {
      missing.push({
        what: `the relay ${relay.name} (${ip}: ${result.status.result})`,
        mechanism: isIP(ip) === 6 ? `ip6:${ip}` : `ip4:${ip}`,
      });
    }
  }
  return missing;
}

/** `v=DMARC1; p=reject; …` → its tags, lower-case names. */
export function dmarcTags(record: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of record.split(';')) {
    const [name, ...value] = part.split('=');
    if (name?.trim()) tags.set(name.trim().toLowerCase(), value.join('=').trim());
  }
  return tags;
}

export async function dmarcRecord(resolver: Resolver, domain: string): Promise<string[]> {
  return (await txt(resolver, `_dmarc.${domain}`)).filter((r) => /^v=dmarc1(\s*;|$)/i.test(r.trim()));
}

/** Gmail and Yahoo require a DMARC record of bulk senders; `p=none` only monitors. */
export function dmarcPolicyRule(domain: string, records: string[], reportAddress: string | null): Rule {
  const suggestion = `v=DMARC1; p=quarantine; rua=mailto:${reportAddress ?? `dmarc@${domain}`}`;
  if (records.length !== 1) {
    return {
      id: 'dmarc_policy',
      status: 'fail',
      detail:
        records.length === 0
          ? `No DMARC record at _dmarc.${domain}`
          : `_dmarc.${domain} publishes ${records.length} DMARC records: receivers ignore them all`,
      fix: `Publish one TXT _dmarc.${domain} "${suggestion}"`,
    };
  }
  const tags = dmarcTags(records[0] as string);
  const policy = (tags.get('p') ?? '').toLowerCase();
  if (policy !== 'none' && policy !== 'quarantine' && policy !== 'reject') {
    return {
      id: 'dmarc_policy',
      status: 'fail',
      detail: `The DMARC record of ${domain} has no valid p= tag`,
      fix: `Publish TXT _dmarc.${domain} "${suggestion}"`,
    };
  }
  if (policy === 'none') {
    return {
      id: 'dmarc_policy',
      status: 'warn',
      detail: `DMARC of ${domain} is p=none: failing mail is only reported, never held back`,
      fix: `Once the reports show only your own sources, move to p=quarantine, then p=reject ("${suggestion}")`,
    };
  }
  const pct = Number(tags.get('pct') ?? '100');
  if (pct < 100) {
    return {
      id: 'dmarc_policy',
      status: 'warn',
      detail: `DMARC of ${domain} is p=${policy} for ${pct}% of failing mail only`,
      fix: 'Remove pct= (or set pct=100) once the reports are clean',
    };
  }
  return pass('dmarc_policy', `DMARC of ${domain} is p=${policy}`);
}

/** Relaxed alignment: the same domain or one under the other (an approximation of the organisational domain). */
const aligned = (a: string, b: string, strict: boolean) =>
  a === b || (!strict && (a.endsWith(`.${b}`) || b.endsWith(`.${a}`)));

/**
 * DMARC passes when SPF or DKIM passes for a domain aligned with From. Pigeon signs with d= the
 * sender domain (aligned even under adkim=s); the SPF domain is the return path's (BOUNCE_DOMAIN).
 */
export function dmarcAlignmentRule(opts: {
  domain: string;
  dkimPasses: boolean;
  bounceDomain: string;
  dmarc: string[];
}): Rule {
  const tags = dmarcTags(opts.dmarc[0] ?? '');
  const spfAligned = aligned(opts.bounceDomain, opts.domain, tags.get('aspf') === 's');
  const spfText = spfAligned
    ? `the return path's domain ${opts.bounceDomain} is aligned too`
    : `the return path's domain ${opts.bounceDomain} is not aligned, so DMARC rests on DKIM alone`;
  if (opts.dkimPasses) return pass('dmarc_alignment', `DKIM signs with d=${opts.domain} (aligned); ${spfText}`);
  return {
    id: 'dmarc_alignment',
    status: spfAligned ? 'warn' : 'fail',
    detail: `DKIM does not verify for ${opts.domain}; ${spfText}`,
    fix: 'Publish the DKIM record (rule dkim): it is what aligns Pigeon’s mail with your From domain',
  };
}

/** Bounces come back to the return path's domain: it needs MX records pointing at Pigeon's receiver. */
export async function returnPathMxRule(resolver: Resolver, bounceDomain: string): Promise<Rule> {
  const mx = await resolver.resolveMx(bounceDomain).catch(() => []);
  const usable = mx.filter((r) => r.exchange !== '' && r.exchange !== '.');
  if (usable.length === 0) {
    return {
      id: 'return_path_mx',
      status: 'fail',
      detail: `The return path's domain ${bounceDomain} (BOUNCE_DOMAIN) has no MX record: bounces and complaints cannot come back`,
      fix: `Publish MX ${bounceDomain} pointing at the host whose port 25 reaches Pigeon's inbound receiver (INBOUND_SMTP_PORT)`,
    };
  }
  const hosts = usable.map((r) => r.exchange).join(', ');
  return pass('return_path_mx', `The return path's domain ${bounceDomain} receives mail at ${hosts}`);
}
