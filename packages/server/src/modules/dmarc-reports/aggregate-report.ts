import { isIP } from 'node:net';
import { DmarcDisposition, type DmarcResult } from '@pigeon/contract';
import { XMLParser } from 'fast-xml-parser';

/** One `<record>` of a report: what a source IP sent as one header-from domain, and how it fared. */
export interface AggregateRecord {
  sourceIp: string;
  count: number;
  disposition: DmarcDisposition;
  /** policy_evaluated: the DMARC-aligned DKIM and SPF results. */
  dkim: DmarcResult;
  spf: DmarcResult;
  headerFrom: string;
  /** The raw results, aligned or not, as the reporter saw them. */
  authResults: {
    dkim: Array<{ domain: string; selector: string | null; result: string }>;
    spf: Array<{ domain: string; scope: string | null; result: string }>;
  };
}

/** An aggregate report (RFC 7489 appendix C; the namespaced 2.0 drafts read the same). */
export interface AggregateReport {
  orgName: string;
  orgEmail: string | null;
  reportId: string;
  begin: Date;
  end: Date;
  policy: { domain: string; adkim: string; aspf: string; p: string; sp: string | null; pct: number | null };
  records: AggregateRecord[];
}

export class MalformedReport extends Error {}

type Node = Record<string, unknown>;

// No entities beyond XML's five: a report never declares any, and declared ones can expand without bound.
const parser = new XMLParser({ ignoreAttributes: true, removeNSPrefix: true, parseTagValue: false, trimValues: true });

const list = (value: unknown): Node[] =>
  (value === undefined || value === null ? [] : Array.isArray(value) ? value : [value]).filter(
    (v): v is Node => typeof v === 'object' && v !== null,
  );
const node = (value: unknown): Node => list(value)[0] ?? {};
const text = (value: unknown): string | null => {
  const v = Array.isArray(value) ? value[0] : value;
  return typeof v === 'string' && v.length > 0 ? v : typeof v === 'number' ? String(v) : null;
};
function required(value: unknown, what: string): string {
  const v = text(value);
  if (v === null) throw new MalformedReport(`the report has no ${what}`);
  return v;
}
function epoch(value: unknown, what: string): Date {
  const v = required(value, what);
  if (!/^\d{1,12}$/.test(v)) throw new MalformedReport(`${what} is not a time in seconds`);
  return new Date(Number(v) * 1000);
}

const disposition = (value: unknown): DmarcDisposition =>
  DmarcDisposition.catch('none').parse(text(value)?.toLowerCase() ?? 'none');
const result = (value: unknown): DmarcResult => (text(value)?.toLowerCase() === 'pass' ? 'pass' : 'fail');
const lower = (value: unknown) => text(value)?.toLowerCase() ?? null;

function record(r: Node): AggregateRecord {
  const row = node(r.row);
  const evaluated = node(row.policy_evaluated);
  const sourceIp = required(row.source_ip, 'source_ip');
  if (isIP(sourceIp) === 0)
    throw new MalformedReport(`source_ip ${JSON.stringify(sourceIp.slice(0, 60))} is no IP address`);
  const count = required(row.count, 'count');
  if (!/^\d{1,12}$/.test(count)) throw new MalformedReport('count is not a whole number');
  const auth = node(r.auth_results);
  return {
    sourceIp,
    count: Number(count),
    disposition: disposition(evaluated.disposition),
    dkim: result(evaluated.dkim),
    spf: result(evaluated.spf),
    headerFrom: required(node(r.identifiers).header_from, 'header_from').toLowerCase(),
    authResults: {
      dkim: list(auth.dkim).map((d) => ({
        domain: lower(d.domain) ?? '',
        selector: text(d.selector),
        result: lower(d.result) ?? 'none',
      })),
      spf: list(auth.spf).map((s) => ({
        domain: lower(s.domain) ?? '',
        scope: lower(s.scope),
        result: lower(s.result) ?? 'none',
      })),
    },
  };
}

/** Reads one report's XML; throws `MalformedReport` when it is not one (or lacks what a report must say). */
export function parseAggregateReport(xml: string): AggregateReport {
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) throw new MalformedReport('the report declares a DOCTYPE');
  let doc: Node;
  try {
    doc = parser.parse(xml, true) as Node;
  } catch (err) {
    throw new MalformedReport(`the report is not XML: ${(err as Error).message}`);
  }
  const feedback = list(doc.feedback)[0];
  if (!feedback) throw new MalformedReport('the XML has no <feedback> element');
  const metadata = node(feedback.report_metadata);
  const range = node(metadata.date_range);
  const published = node(feedback.policy_published);
  const pct = text(published.pct);
  return {
    orgName: required(metadata.org_name, 'org_name'),
    orgEmail: text(metadata.email),
    reportId: required(metadata.report_id, 'report_id'),
    begin: epoch(range.begin, 'date_range begin'),
    end: epoch(range.end, 'date_range end'),
    policy: {
      domain: required(published.domain, 'policy_published domain').toLowerCase(),
      adkim: lower(published.adkim) ?? 'r',
      aspf: lower(published.aspf) ?? 'r',
      p: lower(published.p) ?? 'none',
      sp: lower(published.sp),
      pct: pct !== null && /^\d{1,3}$/.test(pct) ? Number(pct) : null,
    },
    records: list(feedback.record).map(record),
  };
}
