import type { DmarcAlignment, DomainDmarc } from '@pigeon/contract';
import { queryRows, type Sql, sql } from '../../db/query.js';
import { findInProject } from '../../db/scoped.js';
import type { Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import { validationFailed } from '../../kit/errors.js';
import type { AggregateReport } from './aggregate-report.js';

const DAY_MS = 86_400_000;
const DEFAULT_RANGE_DAYS = 30;
const MAX_RANGE_DAYS = 400;
const MAX_SOURCES = 1000;
/** The window of the alignment warning on `GET /domains/:id`. */
export const ALIGNMENT_WINDOW_DAYS = 7;

/** The rua address the domain's DMARC record should name, when the inbound receiver takes it. */
export const dmarcReportAddress = (config: AppDeps['config']): string | null =>
  config.deliverability.inbound.port === undefined ? null : config.deliverability.dmarcReports.address;

// Counts as numbers: sums of bigint are numeric, which node-postgres hands back as strings.
const COUNTS = sql`coalesce(sum(x.count), 0)::float8 AS messages,
  coalesce(sum(x.count) FILTER (WHERE x.dkim = 'pass' OR x.spf = 'pass'), 0)::float8 AS "dmarcPass",
  coalesce(sum(x.count) FILTER (WHERE x.dkim <> 'pass' AND x.spf <> 'pass'), 0)::float8 AS "dmarcFail",
  coalesce(sum(x.count) FILTER (WHERE x.dkim = 'pass'), 0)::float8 AS "dkimAligned",
  coalesce(sum(x.count) FILTER (WHERE x.spf = 'pass'), 0)::float8 AS "spfAligned"`;

interface Counts {
  messages: number;
  dmarcPass: number;
  dmarcFail: number;
  dkimAligned: number;
  spfAligned: number;
}

/** The range asked for: `to` default now, `from` default 30 days before, widened to its UTC day. */
function range(query: { from?: string; to?: string }, now: Date): { from: Date; to: Date } {
  const to = query.to ? new Date(query.to) : now;
  const asked = query.from ? new Date(query.from) : new Date(to.getTime() - DEFAULT_RANGE_DAYS * DAY_MS);
  const from = new Date(Math.floor(asked.getTime() / DAY_MS) * DAY_MS);
  const invalid = (message: string) => validationFailed([{ field: 'from', message, code: 'invalid_range' }]);
  if (from >= to) throw invalid('must be before `to`');
  if (to.getTime() - from.getTime() > MAX_RANGE_DAYS * DAY_MS)
    throw invalid(`the range is at most ${MAX_RANGE_DAYS} days`);
  return { from, to };
}

/** The domain's reports that began in [from, to), with their records as `x`. */
const recordsIn = (projectId: string, domainId: string, from: Date, to: Date): Sql =>
  sql`dmarc_reports r JOIN dmarc_report_records x ON x.report_id = r.id
      WHERE r.project_id = ${projectId}::uuid AND r.domain_id = ${domainId}::uuid
        AND r.begin_at >= ${from} AND r.begin_at < ${to}`;

/**
 * `GET /domains/:id/dmarc`: the domain's aggregate reports over a range (default the last 30
 * days): totals, each source IP, and each UTC day by the day its reports began.
 */
export async function domainDmarc(
  deps: Pick<AppDeps, 'db' | 'config' | 'clock'>,
  projectId: string,
  input: { id: string; from?: string; to?: string; now?: Date },
): Promise<DomainDmarc> {
  const db = deps.db.reads;
  const domain = await findInProject<{ id: string; domain: string }>(db, 'domains', projectId, input.id, 'Domain');
  const { from, to } = range(input, input.now ?? deps.clock.now());
  const [reports] = await queryRows<{ reports: number; reporters: string[] }>(
    db,
    sql`SELECT count(*)::int AS reports, coalesce(array_agg(DISTINCT r.org_name ORDER BY r.org_name), '{}') AS reporters
        FROM dmarc_reports r
        WHERE r.project_id = ${projectId}::uuid AND r.domain_id = ${domain.id}::uuid
          AND r.begin_at >= ${from} AND r.begin_at < ${to}`,
  );
  const [latest] = await queryRows<{ policy: AggregateReport['policy'] }>(
    db,
    sql`SELECT policy FROM dmarc_reports
        WHERE project_id = ${projectId}::uuid AND domain_id = ${domain.id}::uuid
          AND begin_at >= ${from} AND begin_at < ${to}
        ORDER BY begin_at DESC, received_at DESC LIMIT 1`,
  );
  const [totals] = await queryRows<Counts>(db, sql`SELECT ${COUNTS} FROM ${recordsIn(projectId, domain.id, from, to)}`);
  const sources = await queryRows<
    Counts & {
      sourceIp: string;
      dispositions: DomainDmarc['sources'][number]['dispositions'];
      headerFrom: string[];
      reporters: string[];
    }
  >(
    db,
    sql`SELECT host(x.source_ip) AS "sourceIp", ${COUNTS},
               json_build_object(
                 'none', coalesce(sum(x.count) FILTER (WHERE x.disposition = 'none'), 0)::float8,
                 'quarantine', coalesce(sum(x.count) FILTER (WHERE x.disposition = 'quarantine'), 0)::float8,
                 'reject', coalesce(sum(x.count) FILTER (WHERE x.disposition = 'reject'), 0)::float8) AS dispositions,
               array_agg(DISTINCT x.header_from ORDER BY x.header_from) AS "headerFrom",
               array_agg(DISTINCT r.org_name ORDER BY r.org_name) AS reporters
        FROM ${recordsIn(projectId, domain.id, from, to)}
        GROUP BY x.source_ip
        ORDER BY sum(x.count) DESC, x.source_ip
        LIMIT ${MAX_SOURCES}`,
  );
  const daily = await queryRows<{ date: string; messages: number; dmarcPass: number; dmarcFail: number }>(
    db,
    sql`SELECT to_char(d.day, 'YYYY-MM-DD') AS date, coalesce(c.messages, 0) AS messages,
               coalesce(c."dmarcPass", 0) AS "dmarcPass", coalesce(c."dmarcFail", 0) AS "dmarcFail"
        FROM generate_series(${from}::timestamptz AT TIME ZONE 'UTC', ${to}::timestamptz AT TIME ZONE 'UTC' - interval '1 microsecond',
                             interval '1 day') AS d (day)
        LEFT JOIN (SELECT date_trunc('day', r.begin_at AT TIME ZONE 'UTC') AS day, ${COUNTS}
                   FROM ${recordsIn(projectId, domain.id, from, to)}
                   GROUP BY 1) c ON c.day = date_trunc('day', d.day)
        ORDER BY d.day`,
  );
  return {
    domainId: domain.id,
    domain: domain.domain,
    from: from.toISOString(),
    to: to.toISOString(),
    reportAddress: dmarcReportAddress(deps.config),
    policy: latest ? policyOf(latest.policy) : null,
    reports: reports?.reports ?? 0,
    reporters: reports?.reporters ?? [],
    totals: totals as Counts,
    sources,
    daily,
  };
}

const policyOf = ({ p, sp, pct, adkim, aspf }: AggregateReport['policy']) => ({ p, sp, pct, adkim, aspf });

/**
 * The last 7 days of a domain's reports for `GET /domains/:id`: how much failed DMARC, from which
 * sources, and a warning when any source failed (forwarders and lookalikes show up here too: the
 * warning names the sources so the owner can tell their own servers from others').
 */
export async function dmarcAlignment(
  db: Queryable,
  projectId: string,
  input: { domainId: string; now: Date },
): Promise<DmarcAlignment> {
  const since = new Date(input.now.getTime() - ALIGNMENT_WINDOW_DAYS * DAY_MS);
  const sources = await queryRows<{ sourceIp: string; messages: number; dmarcFail: number }>(
    db,
    sql`SELECT host(x.source_ip) AS "sourceIp", ${COUNTS}
        FROM ${recordsIn(projectId, input.domainId, since, input.now)}
        GROUP BY x.source_ip`,
  );
  const [last] = await queryRows<{ end_at: Date }>(
    db,
    sql`SELECT max(end_at) AS end_at FROM dmarc_reports
        WHERE project_id = ${projectId}::uuid AND domain_id = ${input.domainId}::uuid`,
  );
  const failing = sources
    .filter((s) => s.dmarcFail > 0)
    .sort((a, b) => b.dmarcFail - a.dmarcFail || a.sourceIp.localeCompare(b.sourceIp))
    .map(({ sourceIp, messages, dmarcFail }) => ({ sourceIp, messages, dmarcFail }));
  const failed = failing.reduce((n, s) => n + s.dmarcFail, 0);
  return {
    since: since.toISOString(),
    messages: sources.reduce((n, s) => n + s.messages, 0),
    dmarcFail: failed,
    failingSources: failing.slice(0, 10),
    warning: failing.length === 0 ? null : alignmentWarning(failing.length, failed),
    lastReportAt: last?.end_at ? last.end_at.toISOString() : null,
  };
}

const alignmentWarning = (sources: number, messages: number) =>
  `${messages} message${messages === 1 ? '' : 's'} from ${sources} source${sources === 1 ? '' : 's'} failed DMARC ` +
  `alignment in the last ${ALIGNMENT_WINDOW_DAYS} days: if a source is yours, sign its mail with this domain's DKIM key ` +
  'or include it in the SPF record of the From domain; if it is not, the mail is spoofed or forwarded.';
