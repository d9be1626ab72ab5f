import { gzipSync } from 'node:zlib';
import { zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { api, bodyOf } from '../../../test/api.js';
import {
  googleReport,
  mailReport,
  microsoftReport,
  type ReportMail,
  reportDay,
  yahooReport,
} from '../../../test/dmarc-reports.js';
import { expectEnvelope } from '../../../test/helpers.js';
import { startMailingPigeon } from '../../../test/mailing-pigeon.js';
import { verifiedSender } from '../../../test/sending.js';
import { queryRows, sql } from '../../db/query.js';
import { type DMARC_REPORT_OUTCOMES, dmarcReports } from '../../metrics/registry.js';
import { applyRetention } from '../retention/service.js';

const MAX_BYTES = 64 * 1024;
const RUA = 'dmarc@bounces.pigeon.test';
const { pigeon, dns } = await startMailingPigeon({
  INBOUND_SMTP_PORT: '0',
  INBOUND_SMTP_HOST: '127.0.0.1',
  BOUNCE_DOMAIN: 'bounces.pigeon.test',
  DMARC_REPORT_MAX_BYTES: String(MAX_BYTES),
});

type Sender = Awaited<ReturnType<typeof verifiedSender>>;
const send = (mail: ReportMail) => mailReport(pigeon.inboundSmtpPort as number, RUA, mail);
let reportIds = 0;
const reportId = () => `${Date.now()}${++reportIds}`;

async function domainOf(s: Sender) {
  const list = await api(pigeon, s.auth).domains.list({ params: { projectId: s.project.id } });
  const domain = bodyOf(list, 200).find((d) => d.domain === s.domain);
  if (!domain) throw new Error(`${s.domain} is not listed`);
  return domain;
}

async function dmarcOf(s: Sender, id: string, query: { from?: string; to?: string } = {}) {
  return bodyOf(await api(pigeon, s.auth).dmarcReports.get({ params: { id }, query }), 200);
}

/** pigeon_dmarc_reports_total{outcome} of this process (the receiver runs in it). */
const counted = async (outcome: (typeof DMARC_REPORT_OUTCOMES)[number]) =>
  (await dmarcReports.get()).values.find((v) => v.labels.outcome === outcome)?.value ?? 0;

const storedReports = async () =>
  Number(
    (await queryRows<{ n: string }>(pigeon.deps.db.pool, sql`SELECT count(*) AS n FROM dmarc_reports`))[0]?.n ?? 0,
  );

describe('DMARC aggregate reports', () => {
  it("suggests a DMARC record whose rua is the receiver's report address", async () => {
    const s = await verifiedSender(pigeon, dns);
    const dmarc = (await domainOf(s)).records.find((r) => r.purpose === 'dmarc');
    expect(dmarc?.value).toBe(`v=DMARC1; p=none; rua=mailto:${RUA}`);
  });

  it("counts Google's, Microsoft's and Yahoo's reports per source IP and day; a resend is counted once", async () => {
    const s = await verifiedSender(pigeon, dns);
    const { id } = await domainOf(s);
    const yesterday = reportDay(1);
    const twoDaysAgo = reportDay(2);
    const google = googleReport({
      domain: s.domain,
      reportId: reportId(),
      ...yesterday,
      rows: [
        { ip: '198.51.100.7', count: 120, dkim: 'pass', spf: 'pass' },
        { ip: '203.0.113.9', count: 4, dkim: 'fail', spf: 'fail', disposition: 'quarantine' },
      ],
    });
    expect(await send(google)).toBe(250);
    expect(
      await send(
        microsoftReport({
          domain: s.domain,
          reportId: reportId(),
          ...yesterday,
          rows: [{ ip: '198.51.100.7', count: 30, dkim: 'pass', spf: 'fail' }],
        }),
      ),
    ).toBe(250);
    expect(
      await send(
        yahooReport({
          domain: s.domain,
          reportId: reportId(),
          ...twoDaysAgo,
          rows: [
            { ip: '198.51.100.7', count: 10, dkim: 'fail', spf: 'pass' },
            { ip: '2001:db8::25', count: 2, dkim: 'fail', spf: 'fail', disposition: 'reject' },
          ],
        }),
      ),
    ).toBe(250);
    // Google sends the same report again (it lost our 250, or a second copy): taken, not counted again.
    const duplicates = await counted('duplicate');
    expect(await send(google)).toBe(250);
    expect(await counted('duplicate')).toBe(duplicates + 1);

    const report = await dmarcOf(s, id);
    expect(report).toMatchObject({
      domainId: id,
      domain: s.domain,
      reportAddress: RUA,
      policy: { p: 'none', sp: 'none', pct: 100, adkim: 'r', aspf: 'r' },
      reports: 3,
      reporters: ['Enterprise Outlook', 'Yahoo', 'google.com'].sort(),
      totals: { messages: 166, dmarcPass: 160, dmarcFail: 6, dkimAligned: 150, spfAligned: 130 },
    });
    expect(report.sources).toEqual([
      {
        sourceIp: '198.51.100.7',
        messages: 160,
        dmarcPass: 160,
        dmarcFail: 0,
        dkimAligned: 150,
        spfAligned: 130,
        dispositions: { none: 160, quarantine: 0, reject: 0 },
        headerFrom: [s.domain],
        reporters: ['Enterprise Outlook', 'Yahoo', 'google.com'].sort(),
      },
      {
        sourceIp: '203.0.113.9',
        messages: 4,
        dmarcPass: 0,
        dmarcFail: 4,
        dkimAligned: 0,
        spfAligned: 0,
        dispositions: { none: 0, quarantine: 4, reject: 0 },
        headerFrom: [s.domain],
        reporters: ['google.com'],
      },
      {
        sourceIp: '2001:db8::25',
        messages: 2,
        dmarcPass: 0,
        dmarcFail: 2,
        dkimAligned: 0,
        spfAligned: 0,
        dispositions: { none: 0, quarantine: 0, reject: 2 },
        headerFrom: [s.domain],
        reporters: ['Yahoo'],
      },
    ]);
    expect(report.daily).toHaveLength(31);
    const day = (unix: number) => new Date(unix * 1000).toISOString().slice(0, 10);
    const byDate = new Map(report.daily.map((d: { date: string }) => [d.date, d]));
    expect(byDate.get(day(yesterday.begin))).toEqual({
      date: day(yesterday.begin),
      messages: 154,
      dmarcPass: 150,
      dmarcFail: 4,
    });
    expect(byDate.get(day(twoDaysAgo.begin))).toEqual({
      date: day(twoDaysAgo.begin),
      messages: 12,
      dmarcPass: 10,
      dmarcFail: 2,
    });
    const quiet = report.daily.filter((d: { messages: number }) => d.messages === 0);
    expect(quiet).toHaveLength(29);

    // The domain warns: two sources failed alignment in the last 7 days.
    const domain = bodyOf(await api(pigeon, s.auth).domains.get({ params: { id } }), 200);
    expect(domain.dmarc).toMatchObject({
      messages: 166,
      dmarcFail: 6,
      failingSources: [
        { sourceIp: '203.0.113.9', messages: 4, dmarcFail: 4 },
        { sourceIp: '2001:db8::25', messages: 2, dmarcFail: 2 },
      ],
      lastReportAt: new Date(yesterday.end * 1000).toISOString(),
    });
    expect(domain.dmarc?.warning).toMatch(/^6 messages from 2 sources failed DMARC alignment in the last 7 days/);
  });

  it('answers a range: older reports only when asked for, and a range that ends before it starts is refused', async () => {
    const s = await verifiedSender(pigeon, dns);
    const { id } = await domainOf(s);
    const old = reportDay(45);
    const rows = [{ ip: '192.0.2.1', count: 7, dkim: 'pass' as const, spf: 'fail' as const }];
    expect(await send(googleReport({ domain: s.domain, reportId: reportId(), ...old, rows }))).toBe(250);

    expect(await dmarcOf(s, id)).toMatchObject({ reports: 0, policy: null, totals: { messages: 0 } });
    // Older than the warning's window too; and its one source passed.
    const { dmarc } = bodyOf(await api(pigeon, s.auth).domains.get({ params: { id } }), 200);
    expect(dmarc).toMatchObject({ messages: 0, dmarcFail: 0, failingSources: [], warning: null });
    const from = new Date((old.begin - 86_400) * 1000).toISOString();
    const to = new Date((old.end + 86_400) * 1000).toISOString();
    const ranged = await dmarcOf(s, id, { from, to });
    expect(ranged).toMatchObject({ reports: 1, totals: { messages: 7, dmarcPass: 7 } });
    expect(ranged.daily.map((d: { messages: number }) => d.messages)).toEqual([0, 7, 0]);

    const backwards = await api(pigeon, s.auth).dmarcReports.get({ params: { id }, query: { from: to, to: from } });
    expect(expectEnvelope(backwards, 422, 'VALIDATION_ERROR').errors?.[0]).toMatchObject({ field: 'from' });
  });

  it("files a report under its own domain's project: another project sees none of it", async () => {
    const mine = await verifiedSender(pigeon, dns);
    const theirs = await verifiedSender(pigeon, dns);
    const theirDomain = await domainOf(theirs);
    const rows = [{ ip: '198.51.100.99', count: 50, dkim: 'pass' as const, spf: 'pass' as const }];
    expect(await send(yahooReport({ domain: theirs.domain, reportId: reportId(), ...reportDay(1), rows }))).toBe(250);

    expect((await dmarcOf(theirs, theirDomain.id)).totals.messages).toBe(50);
    const peek = await api(pigeon, mine.auth).dmarcReports.get({ params: { id: theirDomain.id } });
    expectEnvelope(peek, 404, 'NOT_FOUND');
    expect((await dmarcOf(mine, (await domainOf(mine)).id)).reports).toBe(0);
  });

  it('takes and drops a report about a domain no project has verified', async () => {
    const before = await storedReports();
    const dropped = await counted('unknown_domain');
    const rows = [{ ip: '198.51.100.1', count: 3, dkim: 'pass' as const, spf: 'pass' as const }];
    const unknown = googleReport({ domain: 'nobody-here.example', reportId: reportId(), ...reportDay(1), rows });
    expect(await send(unknown)).toBe(250);
    expect(await storedReports()).toBe(before);
    expect(await counted('unknown_domain')).toBe(dropped + 1);
  });

  it('refuses a corrupt, malformed or oversized report and stores nothing of it; the receiver goes on', async () => {
    const s = await verifiedSender(pigeon, dns);
    const { id } = await domainOf(s);
    const facts = { domain: s.domain, reportId: reportId(), ...reportDay(1) };
    const rows = [{ ip: '198.51.100.7', count: 5, dkim: 'pass' as const, spf: 'pass' as const }];
    const good = googleReport({ ...facts, rows });
    const before = await storedReports();
    const refused = await counted('refused');

    const truncatedZip = {
      ...good,
      attachment: { ...good.attachment, content: good.attachment.content.subarray(0, 60) },
    };
    expect(await send(truncatedZip)).toBe(550);
    const notGzip = yahooReport({ ...facts, rows });
    notGzip.attachment.content = Buffer.from('this is not gzip at all');
    expect(await send(notGzip)).toBe(550);
    const noReportId = {
      ...good,
      attachment: {
        filename: 'report.xml',
        contentType: 'text/xml',
        content: Buffer.from(`<feedback><report_metadata><org_name>x</org_name></report_metadata></feedback>`),
      },
    };
    expect(await send(noReportId)).toBe(550);
    const notXml = {
      ...good,
      attachment: { filename: 'r.xml', contentType: 'text/xml', content: Buffer.from('<a><b></a>') },
    };
    expect(await send(notXml)).toBe(550);
    const noAttachment = {
      ...good,
      attachment: { filename: 'notes.txt', contentType: 'text/plain', content: Buffer.from('hi') },
    };
    expect(await send(noAttachment)).toBe(550);
    // A bomb: a few hundred bytes that inflate past DMARC_REPORT_MAX_BYTES, as gzip and as a zip entry.
    const padding = `<!-- ${'0'.repeat(MAX_BYTES * 4)} -->`;
    const bomb = Buffer.from(`<?xml version="1.0"?>${padding}`);
    expect(
      await send({
        ...good,
        attachment: {
          ...good.attachment,
          filename: 'b.xml.gz',
          content: gzipSync(bomb),
          contentType: 'application/gzip',
        },
      }),
    ).toBe(552);
    const zipBomb = Buffer.from(zipSync({ 'b.xml': bomb }));
    expect(zipBomb.length).toBeLessThan(4096);
    expect(await send({ ...good, attachment: { ...good.attachment, content: zipBomb } })).toBe(552);
    expect(await storedReports()).toBe(before);
    expect(await counted('refused')).toBe(refused + 7);

    expect(await send(good)).toBe(250);
    expect((await dmarcOf(s, id)).totals.messages).toBe(5);
  });

  it("ages reports out with the project's events retention", async () => {
    const s = await verifiedSender(pigeon, dns);
    const { id } = await domainOf(s);
    const rows = [{ ip: '192.0.2.44', count: 9, dkim: 'pass' as const, spf: 'pass' as const }];
    expect(await send(googleReport({ domain: s.domain, reportId: reportId(), ...reportDay(20), rows }))).toBe(250);
    expect(await send(googleReport({ domain: s.domain, reportId: reportId(), ...reportDay(1), rows }))).toBe(250);
    const patched = await api(pigeon, { cookie: s.owner.cookie }).users.updateProject({
      params: { id: s.project.id },
      body: { retention: { eventsDays: 14 } },
    });
    expect(patched.status).toBe(200);

    await applyRetention(pigeon.deps.db.pool);
    expect((await dmarcOf(s, id)).totals.messages).toBe(9);
  });
});
