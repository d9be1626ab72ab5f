import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { commonErrors, ErrorEnvelope, Timestamp } from '../common.js';
import { meta } from '../meta.js';
import { DmarcAlignment } from './dmarc-reports.js';

const c = initContract();
const dashboard = meta({ auth: 'dashboard', permission: 'project.use' });
const manage = meta({ auth: 'dashboard', permission: 'project.manage' });
const Id = z.object({ id: z.string().uuid() });

export const DnsRecordPurpose = z.enum(['dkim', 'spf', 'dmarc']);
export type DnsRecordPurpose = z.infer<typeof DnsRecordPurpose>;
export const DnsRecordStatus = z.enum(['verified', 'missing', 'mismatch', 'unchecked']);
export type DnsRecordStatus = z.infer<typeof DnsRecordStatus>;
export const DomainStatus = z.enum(['pending', 'verified']);
export type DomainStatus = z.infer<typeof DomainStatus>;

export const DnsRecord = z.object({
  type: z.literal('TXT'),
  name: z.string(),
  value: z.string(),
  purpose: DnsRecordPurpose,
  required: z.boolean().describe('Only the DKIM record is required for verification; SPF and DMARC are recommended'),
  status: DnsRecordStatus,
});

const domainObject = z.object({
  id: z.string().uuid(),
  domain: z.string(),
  status: DomainStatus,
  verifiedAt: Timestamp.nullable(),
  lastCheckedAt: Timestamp.nullable(),
  dkimSelector: z.string(),
  records: z.array(DnsRecord),
  note: z.string().nullable().describe('Why the domain is in its state, e.g. verified at once with the local outbox'),
  createdAt: Timestamp,
});
type DomainObject = typeof domainObject;
/** `Domain` under a name of its own, so declaration files refer to it rather than spell it out per route. */
export interface DomainSchema extends DomainObject {}
export const Domain: DomainSchema = domainObject;

/** A sender domain's warm-up (issue 64): a daily cap on campaign and workflow mail, ramping over `days`. */
export const DomainWarmupSettings = z
  .object({
    enabled: z.boolean().describe("Hold campaign and workflow mail over the day's cap until the next day (UTC)"),
    startCap: z.number().int().min(1).max(10_000_000).describe('The cap of the first day (messages)'),
    targetCap: z
      .number()
      .int()
      .min(1)
      .max(10_000_000)
      .describe('The cap of the last day; the caps between grow by the same factor each day'),
    days: z
      .number()
      .int()
      .min(1)
      .max(365)
      .describe('Days the ramp lasts; after the last one the warm-up is complete and nothing is held'),
  })
  .refine((w) => w.targetCap >= w.startCap, { message: 'targetCap must be at least startCap', path: ['targetCap'] });
export type DomainWarmupSettings = z.infer<typeof DomainWarmupSettings>;

export const DomainWarmup = z.object({
  enabled: z.boolean(),
  startCap: z.number().int().nullable().describe('null: never set'),
  targetCap: z.number().int().nullable(),
  days: z.number().int().nullable(),
  startedOn: z.string().nullable().describe('The first day of the ramp (UTC date, YYYY-MM-DD); null when not enabled'),
  day: z.number().int().nullable().describe('Which day of the ramp today is (1 = the first); null when not enabled'),
  capToday: z
    .number()
    .int()
    .nullable()
    .describe('Campaign and workflow messages allowed today; null when not enabled or the ramp is complete'),
  sentToday: z
    .number()
    .int()
    .describe('Messages sent from the domain today (UTC), transactional mail included (counted, never held)'),
  nextResetAt: Timestamp.nullable().describe('When the day ends (midnight UTC) and held mail is due again'),
});
export type DomainWarmup = z.infer<typeof DomainWarmup>;

const domainDetailObject = domainObject.extend({ warmup: DomainWarmup, dmarc: DmarcAlignment });
type DomainDetailObject = typeof domainDetailObject;
export interface DomainDetailSchema extends DomainDetailObject {}
export const DomainDetail: DomainDetailSchema = domainDetailObject;

export const DomainName = z
  .string()
  .trim()
  .toLowerCase()
  .max(253)
  .regex(
    /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/,
    'must be a domain name such as example.com',
  );

export const domainsContract = c.router(
  {
    create: {
      method: 'POST',
      path: '/domains',
      summary: 'Add a sender domain; returns the DNS records to publish (DKIM, plus SPF and DMARC suggestions)',
      metadata: manage,
      body: z.object({ domain: DomainName }),
      responses: { 201: Domain, 403: ErrorEnvelope, 409: ErrorEnvelope, ...commonErrors },
    },
    list: {
      method: 'GET',
      path: '/domains/project/:projectId',
      summary: "The project's domains, verified and pending",
      metadata: dashboard,
      pathParams: z.object({ projectId: z.string().uuid() }),
      responses: { 200: z.array(Domain), 404: ErrorEnvelope, ...commonErrors },
    },
    get: {
      method: 'GET',
      path: '/domains/:id',
      summary:
        'A domain with its warm-up state (cap today, sent today, next reset) and the DMARC alignment of its last 7 days of reports (`dmarc.warning` when sources fail)',
      metadata: dashboard,
      pathParams: Id,
      responses: { 200: DomainDetail, 404: ErrorEnvelope, ...commonErrors },
    },
    setWarmup: {
      method: 'PUT',
      path: '/domains/:id/warmup',
      summary: "Set the domain's warm-up: a daily cap on campaign and workflow mail, ramping over days",
      metadata: meta({
        auth: 'dashboard',
        permission: 'project.manage',
        example: { enabled: true, startCap: 50, targetCap: 20000, days: 30 },
      }),
      pathParams: Id,
      body: DomainWarmupSettings,
      responses: { 200: DomainDetail, 403: ErrorEnvelope, 404: ErrorEnvelope, ...commonErrors },
    },
    verify: {
      method: 'GET',
      path: '/domains/:id/verify',
      summary: "Check the domain's DNS records now",
      metadata: dashboard,
      pathParams: Id,
      responses: { 200: Domain, 404: ErrorEnvelope, ...commonErrors },
    },
    delete: {
      method: 'DELETE',
      path: '/domains/:id',
      summary: 'Remove a domain (409 while a template sends from it)',
      metadata: manage,
      pathParams: Id,
      body: c.noBody(),
      responses: { 204: c.noBody(), 403: ErrorEnvelope, 404: ErrorEnvelope, 409: ErrorEnvelope, ...commonErrors },
    },
  },
  { strictStatusCodes: true },
);

export const domainSchemas = { Domain, DomainDetail, DnsRecord };
