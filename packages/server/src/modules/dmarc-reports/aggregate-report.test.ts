import { gzipSync } from 'node:zlib';
import { zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { MalformedReport, parseAggregateReport } from './aggregate-report.js';
import { RefusedReportFile, unpackReportFile } from './unpack.js';

const budget = (limit: number) => ({ left: limit, limit });

const REPORT = `<?xml version="1.0" encoding="UTF-8"?>
<dmarc:feedback xmlns:dmarc="urn:ietf:params:xml:ns:dmarc-2.0">
  <dmarc:report_metadata>
    <dmarc:org_name>AT&amp;T</dmarc:org_name><dmarc:report_id>r-1</dmarc:report_id>
    <dmarc:date_range><dmarc:begin>1767225600</dmarc:begin><dmarc:end>1767311999</dmarc:end></dmarc:date_range>
  </dmarc:report_metadata>
  <dmarc:policy_published><dmarc:domain>Example.COM</dmarc:domain><dmarc:p>reject</dmarc:p></dmarc:policy_published>
  <dmarc:record>
    <dmarc:row><dmarc:source_ip>192.0.2.10</dmarc:source_ip><dmarc:count>3</dmarc:count>
      <dmarc:policy_evaluated><dmarc:disposition>reject</dmarc:disposition><dmarc:dkim>fail</dmarc:dkim>
        <dmarc:spf>fail</dmarc:spf></dmarc:policy_evaluated></dmarc:row>
    <dmarc:identifiers><dmarc:header_from>example.com</dmarc:header_from></dmarc:identifiers>
    <dmarc:auth_results>
      <dmarc:dkim><dmarc:domain>a.example</dmarc:domain><dmarc:result>pass</dmarc:result></dmarc:dkim>
      <dmarc:dkim><dmarc:domain>b.example</dmarc:domain><dmarc:result>fail</dmarc:result></dmarc:dkim>
      <dmarc:spf><dmarc:domain>c.example</dmarc:domain><dmarc:result>softfail</dmarc:result></dmarc:spf>
    </dmarc:auth_results>
  </dmarc:record>
</dmarc:feedback>`;

describe('reading an aggregate report', () => {
  it('reads prefixed 2.0 elements, entities, several auth results, and fills what a report may leave out', () => {
    const report = parseAggregateReport(REPORT);
    expect(report).toMatchObject({
      orgName: 'AT&T',
      orgEmail: null,
      reportId: 'r-1',
      begin: new Date(1767225600 * 1000),
      policy: { domain: 'example.com', p: 'reject', adkim: 'r', aspf: 'r', sp: null, pct: null },
    });
    expect(report.records).toEqual([
      {
        sourceIp: '192.0.2.10',
        count: 3,
        disposition: 'reject',
        dkim: 'fail',
        spf: 'fail',
        headerFrom: 'example.com',
        authResults: {
          dkim: [
            { domain: 'a.example', selector: null, result: 'pass' },
            { domain: 'b.example', selector: null, result: 'fail' },
          ],
          spf: [{ domain: 'c.example', scope: null, result: 'softfail' }],
        },
      },
    ]);
  });

  it('refuses a DOCTYPE (entity expansion), a source that is no IP address, and a count that is no number', () => {
    const laughs = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]>${REPORT.slice(22)}`;
    expect(() => parseAggregateReport(laughs)).toThrow(MalformedReport);
    expect(() => parseAggregateReport(REPORT.replace('192.0.2.10', 'mail.example'))).toThrow(/no IP address/);
    expect(() => parseAggregateReport(REPORT.replace('<dmarc:count>3', '<dmarc:count>-3'))).toThrow(/whole number/);
  });
});

describe('unpacking report files', () => {
  const xml = Buffer.from(REPORT);

  it('unpacks zip, gzip and plain XML, by type or by name', () => {
    const zip = Buffer.from(zipSync({ 'r.xml': xml }));
    expect(unpackReportFile({ contentType: 'application/zip', content: zip }, budget(1e6))).toEqual([REPORT]);
    const named = { contentType: 'application/octet-stream', filename: 'x!y.xml.gz', content: gzipSync(xml) };
    expect(unpackReportFile(named, budget(1e6))).toEqual([REPORT]);
    expect(unpackReportFile({ contentType: 'text/xml', content: xml }, budget(1e6))).toEqual([REPORT]);
    expect(unpackReportFile({ contentType: 'text/plain', content: xml }, budget(1e6))).toEqual([]);
  });

  it('shares one budget between the files of a message', () => {
    const shared = budget(xml.length + 10);
    unpackReportFile({ contentType: 'text/xml', content: xml }, shared);
    expect(() => unpackReportFile({ contentType: 'application/gzip', content: gzipSync(xml) }, shared)).toThrow(
      RefusedReportFile,
    );
  });

  it('inflates a zip entry no further than the size its header declares, so a lying header is no bomb', () => {
    const bomb = Buffer.alloc(4 * 1024 * 1024, 0x41);
    const zip = Buffer.from(zipSync({ 'b.xml': bomb }));
    // Rewrite the uncompressed size of the central directory entry (offset 24 from its signature) to 100 bytes.
    const central = zip.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    zip.writeUInt32LE(100, central + 24);
    const [doc] = unpackReportFile({ contentType: 'application/zip', content: zip }, budget(1024));
    expect(doc).toHaveLength(100);
    expect(() => parseAggregateReport(doc as string)).toThrow(MalformedReport);
  });

  it('refuses what is not the archive it claims to be', () => {
    const fake = { contentType: 'application/zip', content: Buffer.from('PK but not really') };
    expect(() => unpackReportFile(fake, budget(1e6))).toThrow(expect.objectContaining({ reason: 'corrupt' }));
    const bomb = { contentType: 'application/gzip', content: gzipSync(Buffer.alloc(1e6)) };
    expect(() => unpackReportFile(bomb, budget(1e5))).toThrow(expect.objectContaining({ reason: 'oversized' }));
  });
});
