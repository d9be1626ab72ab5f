import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { commonErrors, ErrorEnvelope, Timestamp } from '../common.js';
import { meta } from '../meta.js';

const c = initContract();

/** What the receiver did with the failing mail (RFC 7489 `policy_evaluated/disposition`). */
export const DmarcDisposition = z.enum(['none', 'quarantine', 'reject']);
export type DmarcDisposition = z.infer<typeof DmarcDisposition>;
/** A DMARC-aligned DKIM or SPF result (`policy_evaluated/dkim`, `/spf`). */
export const DmarcResult = z.enum(['pass', 'fail']);
export type DmarcResult = z.infer<typeof DmarcResult>;

const count = z.number().int().min(0);

const alignmentCountsObject = z.object({
  messages: count.describe('Messages the reports counted'),
  dmarcPass: count.describe('Messages that passed DMARC: DKIM or SPF passed and aligned with the From domain'),
  dmarcFail: count.describe('Messages that failed DMARC: neither DKIM nor SPF passed aligned'),
  dkimAligned: count.describe('Messages whose DKIM passed aligned'),
  spfAligned: count.describe('Messages whose SPF passed aligned'),
});
type AlignmentCountsObject = typeof alignmentCountsObject;
export interface DmarcAlignmentCountsSchema extends AlignmentCountsObject {}
export const DmarcAlignmentCounts: DmarcAlignmentCountsSchema = alignmentCountsObject;

const sourceObject = alignmentCountsObject.extend({
  sourceIp: z.string().describe('The IP address that sent the mail, as the reporters saw it'),
  dispositions: z
    .object({ none: count, quarantine: count, reject: count })
    .describe("Messages by what the receivers did under the domain's policy"),
  headerFrom: z.array(z.string()).describe('The From domains its mail carried'),
  reporters: z.array(z.string()).describe('The organisations that reported it (org_name)'),
});
type SourceObject = typeof sourceObject;
export interface DmarcSourceSchema extends SourceObject {}
export const DmarcSource: DmarcSourceSchema = sourceObject;
export type DmarcSource = z.infer<typeof DmarcSource>;

const dayObject = z.object({
  date: z.string().describe('The UTC day (YYYY-MM-DD) the reports began'),
  messages: count,
  dmarcPass: count,
  dmarcFail: count,
});
type DayObject = typeof dayObject;
export interface DmarcDaySchema extends DayObject {}
export const DmarcDay: DmarcDaySchema = dayObject;
export type DmarcDay = z.infer<typeof DmarcDay>;

const domainDmarcObject = z.object({
  domainId: z.string().uuid(),
  domain: z.string(),
  from: Timestamp.describe('Reports that began at or after this'),
  to: Timestamp.describe('…and before this'),
  reportAddress: z
    .string()
    .nullable()
    .describe(
      "The rua address of Pigeon's inbound receiver the domain's DMARC record names (`rua=mailto:…`); null when the receiver is off",
    ),
  policy: z
    .object({
      p: z.string().describe('none, quarantine or reject'),
      sp: z.string().nullable().describe("Subdomains' policy; null: as p"),
      pct: z.number().int().nullable().describe('Percentage of failing mail the policy applies to; null: 100'),
      adkim: z.string().describe('DKIM alignment: r (relaxed) or s (strict)'),
      aspf: z.string().describe('SPF alignment: r (relaxed) or s (strict)'),
    })
    .nullable()
    .describe("The domain's DMARC policy as the latest report of the range saw it published; null without reports"),
  reports: count.describe('Aggregate reports received for the range'),
  reporters: z.array(z.string()).describe('The organisations that sent them (org_name)'),
  totals: DmarcAlignmentCounts,
  sources: z.array(DmarcSource).describe('Per source IP, most messages first (at most 1,000)'),
  daily: z.array(DmarcDay).describe('Every UTC day of the range, oldest first, by the day each report began'),
});
type DomainDmarcObject = typeof domainDmarcObject;
export interface DomainDmarcSchema extends DomainDmarcObject {}
export const DomainDmarc: DomainDmarcSchema = domainDmarcObject;
export type DomainDmarc = z.infer<typeof DomainDmarc>;

/** The recent alignment of a domain's mail, shown on `GET /domains/:id` (a warning when sources fail). */
const dmarcAlignmentObject = z.object({
  since: Timestamp.describe('The window: reports that began in the last 7 days'),
  messages: count,
  dmarcFail: count,
  failingSources: z
    .array(z.object({ sourceIp: z.string(), messages: count, dmarcFail: count }))
    .describe('Sources with messages that failed DMARC alignment, most failures first (at most 10)'),
  warning: z
    .string()
    .nullable()
    .describe('Set when sources fail alignment: what failed and what to do; null when none did'),
  lastReportAt: Timestamp.nullable().describe('When the latest report received for the domain ended'),
});
type DmarcAlignmentObject = typeof dmarcAlignmentObject;
export interface DmarcAlignmentSchema extends DmarcAlignmentObject {}
export const DmarcAlignment: DmarcAlignmentSchema = dmarcAlignmentObject;
export type DmarcAlignment = z.infer<typeof DmarcAlignment>;

export const DmarcRange = z.object({
  from: z
    .string()
    .datetime({ offset: true })
    .optional()
    .describe('Inclusive lower bound (ISO 8601), widened to its UTC day; default `to` minus 30 days'),
  to: z.string().datetime({ offset: true }).optional().describe('Exclusive upper bound (ISO 8601); default now'),
});

export const dmarcReportsContract = c.router(
  {
    get: {
      method: 'GET',
      path: '/domains/:id/dmarc',
      summary: "The domain's DMARC aggregate reports: pass and fail by source IP and by day",
      description:
        'Reports mailed by receivers (Google, Microsoft, Yahoo…) to the rua address of the domain’s DMARC record ' +
        '(`reportAddress`), counted once per reporter and report id. Alignment is the receivers’ own verdict.',
      metadata: meta({ auth: 'dashboard', permission: 'project.use' }),
      pathParams: z.object({ id: z.string().uuid() }),
      query: DmarcRange,
      responses: { 200: DomainDmarc, 404: ErrorEnvelope, ...commonErrors },
    },
  },
  { strictStatusCodes: true },
);

export const dmarcReportSchemas = { DomainDmarc, DmarcSource, DmarcDay, DmarcAlignmentCounts, DmarcAlignment };
