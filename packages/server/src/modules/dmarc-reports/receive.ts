import { simpleParser } from 'mailparser';
import type { AppDeps } from '../../deps.js';
import { dmarcReports } from '../../metrics/registry.js';
import { type AggregateReport, MalformedReport, parseAggregateReport } from './aggregate-report.js';
import { type StoreOutcome, storeAggregateReport } from './store.js';
import { type Budget, RefusedReportFile, reportKind, unpackReportFile } from './unpack.js';

const smtpError = (responseCode: number, message: string) => Object.assign(new Error(message), { responseCode });

export interface ReceivedReport {
  orgName: string;
  reportId: string;
  domain: string;
  outcome: StoreOutcome;
}

/** The reports of a message: every zip, gzip or XML part, read within one decompressed budget. */
async function reportsOf(raw: Buffer, budget: Budget): Promise<AggregateReport[]> {
  const parsed = await simpleParser(raw, { skipHtmlToText: true, skipTextToHtml: true, skipTextLinks: true });
  const parts = parsed.attachments.filter((a) => reportKind(a) !== undefined);
  return parts.flatMap((part) => unpackReportFile(part, budget)).map(parseAggregateReport);
}

/**
 * Takes a message mailed to the DMARC report address (`DMARC_REPORT_ADDRESS`): reads its
 * aggregate reports and stores each for the verified sender domains it is about. A message with
 * no report, an unreadable or malformed one is refused (550 5.6.0), one over `DMARC_REPORT_MAX_BYTES`
 * decompressed too (552 5.3.4); either way nothing of it is stored. Reports about no domain here
 * are taken and dropped (the reporter has nothing to fix), counted in `pigeon_dmarc_reports_total`.
 */
export async function receiveDmarcReports(
  deps: Pick<AppDeps, 'db' | 'config'>,
  raw: Buffer,
): Promise<ReceivedReport[]> {
  const limit = deps.config.deliverability.dmarcReports.maxBytes;
  let reports: AggregateReport[];
  try {
    reports = await reportsOf(raw, { left: limit, limit });
  } catch (err) {
    if (err instanceof RefusedReportFile && err.reason === 'oversized') {
      dmarcReports.inc({ outcome: 'refused' });
      throw smtpError(552, `5.3.4 ${err.message}`);
    }
    if (err instanceof RefusedReportFile || err instanceof MalformedReport) {
      dmarcReports.inc({ outcome: 'refused' });
      throw smtpError(550, `5.6.0 Malformed DMARC aggregate report: ${err.message}`);
    }
    throw err;
  }
  if (reports.length === 0) {
    dmarcReports.inc({ outcome: 'refused' });
    throw smtpError(550, '5.6.0 Not a DMARC aggregate report (no zip, gzip or XML report attached)');
  }
  const received: ReceivedReport[] = [];
  for (const report of reports) {
    const outcome = await storeAggregateReport(deps.db.pool, report);
    dmarcReports.inc({ outcome });
    received.push({ orgName: report.orgName, reportId: report.reportId, domain: report.policy.domain, outcome });
  }
  return received;
}
