import type { SenderCheck, SenderCheckStatus } from '@pigeon/contract';
import type { z } from 'zod';
import { findInProject } from '../../db/scoped.js';
import type { AppDeps } from '../../deps.js';
import { relaysOfProject } from '../../mail/relays.js';
import { projectHealth } from '../deliverability/public.js';
import { dmarcReportAddress } from '../dmarc-reports/public.js';
import type { DomainRow } from '../domains/public.js';
import { createResolver } from '../domains/public.js';
import {
  dkimRule,
  dmarcAlignmentRule,
  dmarcPolicyRule,
  dmarcRecord,
  type RelayTarget,
  returnPathMxRule,
  spfRule,
} from './dns-rules.js';
import { oneClickUnsubscribeRule, rateRules, relayTlsRule } from './mail-rules.js';

const SEVERITY: Record<SenderCheckStatus, number> = { pass: 0, warn: 1, fail: 2 };

/**
 * GET /domains/:id/check: every rule of the sender check for one of the project's domains, DNS
 * looked up now through the domain checks' resolver (DNS_SERVERS), rates from the project health.
 */
export async function checkSender(deps: AppDeps, projectId: string, id: string): Promise<z.infer<typeof SenderCheck>> {
  const domain = await findInProject<DomainRow>(deps.db.pool, 'domains', projectId, id, 'Domain');
  const resolver = createResolver(deps.config.dns.servers);
  const relays: RelayTarget[] = (await relaysOfProject(deps, projectId)).map((r) => ({
    name: r.name,
    kind: r.kind,
    url: r.url ?? undefined,
  }));
  const bounceDomain = deps.config.deliverability.bounceDomain;
  const [spf, dkim, dmarc, returnPath, health] = await Promise.all([
    spfRule(resolver, domain.domain, relays),
    dkimRule(resolver, domain),
    dmarcRecord(resolver, domain.domain),
    returnPathMxRule(resolver, bounceDomain),
    projectHealth(deps.db.pool, projectId, deps.config.deliverability.health),
  ]);
  const rules = [
    spf,
    dkim,
    dmarcPolicyRule(domain.domain, dmarc, dmarcReportAddress(deps.config)),
    dmarcAlignmentRule({ domain: domain.domain, dkimPasses: dkim.status === 'pass', bounceDomain, dmarc }),
    returnPath,
    oneClickUnsubscribeRule({ publicUrl: deps.config.http.publicUrl, linkSecret: deps.config.secrets.linkSigning }),
    ...rateRules(health),
    relayTlsRule(relays),
  ];
  const worst = rules.reduce<SenderCheckStatus>((w, r) => (SEVERITY[r.status] > SEVERITY[w] ? r.status : w), 'pass');
  return {
    domainId: domain.id,
    domain: domain.domain,
    status: worst,
    checkedAt: deps.clock.now().toISOString(),
    rules,
  };
}
