import type pg from 'pg';
import { uuidv7 } from 'uuidv7';
import { queryRows, runStatement, sql } from '../../db/query.js';
import { inTransaction, type Queryable } from '../../db/sql.js';
import type { AggregateRecord, AggregateReport } from './aggregate-report.js';

/** What became of a report: stored for one or more sender domains, already had, or about no domain here. */
export type StoreOutcome = 'stored' | 'duplicate' | 'unknown_domain';

interface SenderDomain {
  id: string;
  project_id: string;
  domain: string;
}

/**
 * The verified sender domain each record belongs to: its header-from domain when verified here,
 * else the report's policy domain (the organisational domain a subdomain's mail is reported under).
 * Records of no verified domain are left out: they are about someone else's mail.
 */
async function recordsByDomain(db: Queryable, report: AggregateReport): Promise<Map<SenderDomain, AggregateRecord[]>> {
  const names = [...new Set([report.policy.domain, ...report.records.map((r) => r.headerFrom)])];
  const domains = await queryRows<SenderDomain>(
    db,
    sql`SELECT id, project_id, domain FROM domains WHERE verified_at IS NOT NULL AND domain = ANY(${names}::text[])`,
  );
  const byName = new Map(domains.map((d) => [d.domain, d]));
  const grouped = new Map<SenderDomain, AggregateRecord[]>();
  const policyDomain = byName.get(report.policy.domain);
  for (const record of report.records) {
    const domain = byName.get(record.headerFrom) ?? policyDomain;
    if (domain) grouped.set(domain, [...(grouped.get(domain) ?? []), record]);
  }
  // A report with no records still says its reporter saw no mail: kept for the policy domain.
  if (report.records.length === 0 && policyDomain) grouped.set(policyDomain, []);
  return grouped;
}

/**
 * Stores a report for each verified sender domain it is about, in one transaction. A report
 * already stored for a domain (same reporter and report id: a resend) is left as it is, so its
 * messages are counted once.
 */
export async function storeAggregateReport(pool: pg.Pool, report: AggregateReport): Promise<StoreOutcome> {
  return inTransaction(pool, async (client) => {
    const grouped = await recordsByDomain(client, report);
    if (grouped.size === 0) return 'unknown_domain';
    let stored = false;
    for (const [domain, records] of grouped) stored = (await insertReport(client, domain, report, records)) || stored;
    return stored ? 'stored' : 'duplicate';
  });
}

async function insertReport(
  db: Queryable,
  domain: SenderDomain,
  report: AggregateReport,
  records: AggregateRecord[],
): Promise<boolean> {
  const id = uuidv7();
  const messages = records.reduce((sum, r) => sum + r.count, 0);
  const [inserted] = await queryRows<{ id: string }>(
    db,
    sql`INSERT INTO dmarc_reports (id, project_id, domain_id, org_name, org_email, report_id, begin_at, end_at, policy,
                                   messages)
        VALUES (${id}::uuid, ${domain.project_id}::uuid, ${domain.id}::uuid, ${report.orgName}, ${report.orgEmail},
                ${report.reportId}, ${report.begin}, ${report.end}, ${JSON.stringify(report.policy)}::jsonb, ${messages})
        ON CONFLICT ON CONSTRAINT dmarc_reports_once DO NOTHING
        RETURNING id`,
  );
  if (!inserted) return false;
  if (records.length === 0) return true;
  await runStatement(
    db,
    sql`INSERT INTO dmarc_report_records (report_id, n, source_ip, count, disposition, dkim, spf, header_from, auth_results)
        SELECT ${id}::uuid, r.n, r.source_ip, r.count, r.disposition, r.dkim, r.spf, r.header_from, r.auth_results
        FROM unnest(${records.map((r) => r.sourceIp)}::inet[], ${records.map((r) => r.count)}::bigint[],
                    ${records.map((r) => r.disposition)}::text[], ${records.map((r) => r.dkim)}::text[],
                    ${records.map((r) => r.spf)}::text[], ${records.map((r) => r.headerFrom)}::text[],
                    ${records.map((r) => JSON.stringify(r.authResults))}::jsonb[])
             WITH ORDINALITY AS r (source_ip, count, disposition, dkim, spf, header_from, auth_results, n)`,
  );
  return true;
}
