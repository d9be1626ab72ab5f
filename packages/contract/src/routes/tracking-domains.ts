import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { commonErrors, ErrorEnvelope, Timestamp } from '../common.js';
import { meta } from '../meta.js';
import { DnsRecordStatus, DomainName, DomainStatus } from './domains.js';

const c = initContract();
const dashboard = meta({ auth: 'dashboard', permission: 'project.use' });
const manage = meta({ auth: 'dashboard', permission: 'project.manage' });
const Id = z.object({ id: z.string().uuid() });

const trackingDomainObject = z.object({
  id: z.string().uuid(),
  domain: z.string().describe('The host open and click links use, e.g. links.example.com'),
  senderDomain: z.object({ id: z.string().uuid(), domain: z.string() }).describe('Mail from this domain uses it'),
  status: DomainStatus,
  verifiedAt: Timestamp.nullable(),
  lastCheckedAt: Timestamp.nullable(),
  record: z
    .object({
      type: z.literal('CNAME'),
      name: z.string(),
      value: z.string().describe("The host of Pigeon's PUBLIC_URL"),
      status: DnsRecordStatus,
    })
    .describe('The DNS record to publish'),
  url: z
    .string()
    .describe('The base of tracked links once verified: PUBLIC_URL with its host replaced (same scheme and port)'),
  note: z.string().nullable().describe('Why the tracking domain is in its state'),
  createdAt: Timestamp,
});
type TrackingDomainObject = typeof trackingDomainObject;
export interface TrackingDomainSchema extends TrackingDomainObject {}
export const TrackingDomain: TrackingDomainSchema = trackingDomainObject;

const notFoundErrors = { 403: ErrorEnvelope, 404: ErrorEnvelope, ...commonErrors };

export const trackingDomainsContract = c.router(
  {
    create: {
      method: 'POST',
      path: '/tracking-domains',
      summary: 'Add a tracking domain: a subdomain of a sender domain that open and click links of its mail use',
      description:
        'The domain must be a subdomain of one of the project’s sender domains (links.example.com for example.com); ' +
        'mail from that sender domain uses it once its CNAME to Pigeon’s public host is verified. One per sender domain.',
      metadata: meta({ auth: 'dashboard', permission: 'project.manage', example: { domain: 'links.example.com' } }),
      body: z.object({ domain: DomainName }),
      responses: { 201: TrackingDomain, 403: ErrorEnvelope, 409: ErrorEnvelope, ...commonErrors },
    },
    list: {
      method: 'GET',
      path: '/tracking-domains',
      summary: "The project's tracking domains",
      metadata: dashboard,
      responses: { 200: z.object({ data: z.array(TrackingDomain) }), 403: ErrorEnvelope, ...commonErrors },
    },
    get: {
      method: 'GET',
      path: '/tracking-domains/:id',
      summary: 'One tracking domain',
      metadata: dashboard,
      pathParams: Id,
      responses: { 200: TrackingDomain, ...notFoundErrors },
    },
    verify: {
      method: 'GET',
      path: '/tracking-domains/:id/verify',
      summary: "Check the tracking domain's CNAME now (a failing check takes a verified one out of use)",
      metadata: dashboard,
      pathParams: Id,
      responses: { 200: TrackingDomain, ...notFoundErrors },
    },
    delete: {
      method: 'DELETE',
      path: '/tracking-domains/:id',
      summary: 'Remove a tracking domain; links already sent on it keep working while its CNAME stays',
      metadata: manage,
      pathParams: Id,
      body: c.noBody(),
      responses: { 204: c.noBody(), ...notFoundErrors },
    },
  },
  { strictStatusCodes: true },
);

export const trackingDomainSchemas = { TrackingDomain };
