import type { Verification } from '@pigeon/contract';
import type { z } from 'zod';
import type { CachingResolver, Lookup } from '../../kit/caching-resolver.js';
import { isPlusAddressed, isRandomInput, suggestCorrection } from './heuristics.js';
import { isAliasDomain, isDisposableDomain, isPersonalDomain } from './lists.js';

type VerificationResult = z.infer<typeof Verification>;

const known = (l: Lookup) => l.status === 'answer' || l.status === 'nodata' || l.status === 'nxdomain';

/** What DNS says about the domain; each flag null when the resolver gave no usable answer. */
async function dnsFacts(resolver: CachingResolver, domain: string) {
  const [mx, a, aaaa, ns] = await Promise.all([
    resolver.lookup(domain, 'MX'),
    resolver.lookup(domain, 'A'),
    resolver.lookup(domain, 'AAAA'),
    resolver.lookup(domain, 'NS'),
  ]);
  const all = [mx, a, aaaa, ns];
  const domainExists = all.some((l) => l.status === 'answer' || l.status === 'nodata')
    ? true
    : all.some((l) => l.status === 'nxdomain')
      ? false
      : null;
  const exchanges = mx.records.map((r) => r.split(' ')[1] ?? '');
  // RFC 7505: a single MX whose exchange is "." says the domain accepts no mail.
  const nullMx = exchanges.length > 0 && exchanges.every((x) => x === '.' || x === '');
  const hasMxRecords = known(mx) ? exchanges.length > 0 && !nullMx : null;
  const hasWebsite = a.status === 'answer' || aaaa.status === 'answer' ? true : known(a) && known(aaaa) ? false : null;
  return { domainExists, hasMxRecords, hasWebsite, nullMx };
}

/**
 * POST /v1/verify: offline lists and heuristics, then DNS through the shared caching resolver.
 * `valid` is false only when the domain does not exist or cannot receive mail (no MX and no
 * A/AAAA to fall back on, or a null MX); unknown DNS (timeouts) leaves it true with a reason.
 */
export async function verifyAddress(deps: { resolver: CachingResolver }, email: string): Promise<VerificationResult> {
  const at = email.lastIndexOf('@');
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  const reasons: string[] = [];
  const isDisposable = isDisposableDomain(domain);
  const isAlias = isAliasDomain(domain);
  const plus = isPlusAddressed(local);
  const random = isRandomInput(local);
  const suggestion = isAlias ? undefined : suggestCorrection(email);
  // The free-provider list also holds common misspellings (gmial.com): those are typos, not providers.
  const isPersonalEmail = isPersonalDomain(domain) && !isDisposable && !suggestion;
  const dns = await dnsFacts(deps.resolver, domain);

  let valid = true;
  if (dns.domainExists === false) {
    valid = false;
    reasons.push(`The domain ${domain} does not exist`);
  } else if (dns.domainExists === null) {
    reasons.push(`DNS did not answer in time for ${domain}: whether it exists and receives mail is unknown`);
  } else if (dns.nullMx) {
    valid = false;
    reasons.push(`${domain} publishes a null MX record: it accepts no mail`);
  } else if (dns.hasMxRecords === false && dns.hasWebsite === false) {
    valid = false;
    reasons.push(`${domain} has no MX record and no A/AAAA record to fall back on: it cannot receive mail`);
  } else if (dns.hasMxRecords === false) {
    reasons.push(`${domain} has no MX record; mail falls back to its A/AAAA address`);
  }
  if (isDisposable) reasons.push(`${domain} is a disposable email provider`);
  if (isAlias) reasons.push(`${domain} is a forwarding (alias) service`);
  if (isPersonalEmail) reasons.push(`${domain} is a free personal email provider`);
  if (plus) reasons.push('The address uses plus addressing (a +tag)');
  if (random) reasons.push('The local part looks like random input');
  if (suggestion) reasons.push(`Possible typo: did you mean ${suggestion}?`);
  if (reasons.length === 0) reasons.push('No problems found');

  return {
    email,
    valid,
    isDisposable,
    isAlias,
    isTypo: suggestion !== undefined,
    isPlusAddressed: plus,
    isRandomInput: random,
    isPersonalEmail,
    domainExists: dns.domainExists,
    hasWebsite: dns.hasWebsite,
    hasMxRecords: dns.hasMxRecords,
    suggestedEmail: suggestion ?? null,
    reasons,
  };
}
