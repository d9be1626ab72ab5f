import type { DomainWarmupSettings } from '@pigeon/contract';
import { findInProject } from '../../db/scoped.js';
import type { AppDeps } from '../../deps.js';
import { dmarcAlignment, dmarcReportAddress } from '../dmarc-reports/public.js';
import { domainWarmup, setDomainWarmup } from '../sending-governor/public.js';
import { type DomainRow, toDomainDto } from './service.js';

type Deps = Pick<AppDeps, 'db' | 'config' | 'clock'>;

const findDomain = (deps: Deps, projectId: string, id: string) =>
  findInProject<DomainRow>(deps.db.pool, 'domains', projectId, id, 'Domain');

/** `GET /domains/:id`: the domain with its warm-up state. */
export async function getDomain(deps: Deps, projectId: string, id: string) {
  const domain = await findDomain(deps, projectId, id);
  const warmup = await domainWarmup(deps.db.pool, projectId, domain.domain);
  const dmarc = await dmarcAlignment(deps.db.pool, projectId, { domainId: domain.id, now: deps.clock.now() });
  return { ...toDomainDto(domain, dmarcReportAddress(deps.config)), warmup, dmarc };
}

/** `PUT /domains/:id/warmup`: sets the warm-up, answers the domain as `GET /domains/:id` does. */
export async function setWarmup(deps: Deps, projectId: string, input: { id: string; settings: DomainWarmupSettings }) {
  const domain = await findDomain(deps, projectId, input.id);
  const settings = input.settings;
  const warmup = await setDomainWarmup(deps.db.pool, projectId, { domain: domain.domain, settings });
  const dmarc = await dmarcAlignment(deps.db.pool, projectId, { domainId: domain.id, now: deps.clock.now() });
  return { ...toDomainDto(domain, dmarcReportAddress(deps.config)), warmup, dmarc };
}
