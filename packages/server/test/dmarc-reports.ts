import { gzipSync } from 'node:zlib';
import { zipSync } from 'fflate';
import nodemailer from 'nodemailer';

/** One row of an aggregate report: what a source sent and how the receiver judged it. */
export interface ReportRow {
  ip: string;
  count: number;
  /** policy_evaluated: the aligned results. */
  dkim: 'pass' | 'fail';
  spf: 'pass' | 'fail';
  disposition?: 'none' | 'quarantine' | 'reject';
  headerFrom?: string;
}

export interface ReportFacts {
  domain: string;
  reportId: string;
  /** Unix seconds. */
  begin: number;
  end: number;
  rows: ReportRow[];
}

export interface ReportMail {
  from: string;
  subject: string;
  attachment: { filename: string; content: Buffer; contentType: string };
}

const DAY = 86_400;

/** A report day: midnight UTC `daysAgo` days before now, to the second before the next midnight. */
export function reportDay(daysAgo: number): { begin: number; end: number } {
  const today = Math.floor(Date.now() / 1000 / DAY) * DAY;
  const begin = today - daysAgo * DAY;
  return { begin, end: begin + DAY - 1 };
}

const authResults = (r: ReportRow, domain: string, selector: string) =>
  `<auth_results><dkim><domain>${r.dkim === 'pass' ? domain : 'elsewhere.example'}</domain><selector>${selector}</selector>` +
  `<result>${r.dkim}</result></dkim><spf><domain>${r.spf === 'pass' ? domain : 'bounce.elsewhere.example'}</domain>` +
  `<scope>mfrom</scope><result>${r.spf}</result></spf></auth_results>`;

const records = (f: ReportFacts, selector: string) =>
  f.rows
    .map(
      (r) =>
        `<record><row><source_ip>${r.ip}</source_ip><count>${r.count}</count><policy_evaluated>` +
        `<disposition>${r.disposition ?? 'none'}</disposition><dkim>${r.dkim}</dkim><spf>${r.spf}</spf>` +
        `</policy_evaluated></row><identifiers><header_from>${r.headerFrom ?? f.domain}</header_from></identifiers>` +
        `${authResults(r, f.domain, selector)}</record>`,
    )
    .join('\n');

const policy = (domain: string) =>
  `<policy_published><domain>${domain}</domain><adkim>r</adkim><aspf>r</aspf><p>none</p><sp>none</sp><pct>100</pct></policy_published>`;

/** Google's shape: a zip named `google.com!<domain>!<begin>!<end>.zip` holding the XML of the same name. */
export function googleReport(f: ReportFacts): ReportMail {
  const name = `google.com!${f.domain}!${f.begin}!${f.end}`;
  const xml = `<?xml version="1.0" encoding="UTF-8" ?>
<feedback>
  <report_metadata><org_name>google.com</org_name><email>noreply-dmarc-support@google.com</email>
    <extra_contact_info>https://support.google.com/a/answer/2466580</extra_contact_info>
    <report_id>${f.reportId}</report_id><date_range><begin>${f.begin}</begin><end>${f.end}</end></date_range>
  </report_metadata>
  ${policy(f.domain)}
  ${records(f, 'pigeon')}
</feedback>`;
  return {
    from: 'noreply-dmarc-support@google.com',
    subject: `Report domain: ${f.domain} Submitter: google.com Report-ID: ${f.reportId}`,
    attachment: {
      filename: `${name}.zip`,
      content: Buffer.from(zipSync({ [`${name}.xml`]: Buffer.from(xml) })),
      contentType: 'application/zip',
    },
  };
}

/** Microsoft's (Outlook.com) shape, here in the DMARC 2.0 namespace: `<…>.xml.gz`, gzip. */
export function microsoftReport(f: ReportFacts): ReportMail {
  const name = `enterprise.protection.outlook.com!${f.domain}!${f.begin}!${f.end}`;
  const xml = `<?xml version="1.0"?>
<feedback xmlns="urn:ietf:params:xml:ns:dmarc-2.0" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <version>1.0</version>
  <report_metadata><org_name>Enterprise Outlook</org_name><email>dmarcreport@microsoft.com</email>
    <report_id>${f.reportId}</report_id><date_range><begin>${f.begin}</begin><end>${f.end}</end></date_range>
  </report_metadata>
  ${policy(f.domain)}
  ${records(f, 'pigeon')}
</feedback>`;
  return {
    from: 'dmarcreport@microsoft.com',
    subject: `Report Domain: ${f.domain} Submitter: enterprise.protection.outlook.com Report-ID: <${f.reportId}>`,
    attachment: { filename: `${name}.xml.gz`, content: gzipSync(xml), contentType: 'application/gzip' },
  };
}

/** Yahoo's shape: gzip XML named `yahoo.com!<domain>!<begin>!<end>.xml.gz`, sent as `application/x-gzip`. */
export function yahooReport(f: ReportFacts): ReportMail {
  const name = `yahoo.com!${f.domain}!${f.begin}!${f.end}`;
  const xml = `<?xml version="1.0"?>
<feedback>
  <report_metadata><org_name>Yahoo</org_name><email>dmarchelp@yahooinc.com</email>
    <report_id>${f.reportId}</report_id><date_range><begin>${f.begin}</begin><end>${f.end}</end></date_range>
  </report_metadata>
  ${policy(f.domain)}
  ${records(f, 's2048')}
</feedback>`;
  return {
    from: 'dmarchelp@yahooinc.com',
    subject: `Report Domain: ${f.domain} Submitter: yahoo.com Report-ID: <${f.reportId}>`,
    attachment: { filename: `${name}.xml.gz`, content: gzipSync(xml), contentType: 'application/x-gzip' },
  };
}

/**
 * Mails a report to the inbound receiver with a real SMTP client (nodemailer); answers the
 * server's reply code (250 taken, else the refusal's code).
 */
export async function mailReport(port: number, to: string, mail: ReportMail): Promise<number> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true });
  try {
    await transport.sendMail({
      from: mail.from,
      to,
      subject: mail.subject,
      text: 'This is an aggregate report.',
      attachments: [mail.attachment],
    });
    return 250;
  } catch (err) {
    const code = (err as { responseCode?: number }).responseCode;
    if (!code) throw err;
    return code;
  } finally {
    transport.close();
  }
}
