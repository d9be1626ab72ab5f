import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { feedbackOfReport, fieldGroups } from './reports.js';

const fixture = (name: string) =>
  readFileSync(join(import.meta.dirname, 'fixtures', name), 'utf8')
    .replaceAll('{{RETURN_PATH}}', 'bounces+0123@bounces.example')
    .replaceAll('{{RECIPIENT}}', 'jane@inbox.example')
    .replaceAll('{{FROM}}', 'hello@sender.example')
    .replaceAll('{{DOMAIN}}', 'sender.example')
    .replaceAll('{{MESSAGE_ID}}', '<id@sender.example>');
const parse = (raw: string) => feedbackOfReport(Buffer.from(raw));

describe('feedbackOfReport', () => {
  it('reads the RFC 3464 DSNs: failed → hard, delayed → soft, delivered → delivery', async () => {
    expect(await parse(fixture('dsn-hard-bounce.eml'))).toEqual({
      kind: 'bounce',
      bounceType: 'hard',
      diagnostic:
        'smtp; 550 5.1.1 <jane@inbox.example>: Recipient address rejected: User unknown in virtual mailbox table',
      source: 'dsn',
    });
    expect(await parse(fixture('dsn-soft-bounce.eml'))).toMatchObject({ kind: 'bounce', bounceType: 'soft' });
    expect(await parse(fixture('dsn-delivered.eml'))).toEqual({
      kind: 'delivery',
      detail: 'smtp; 250 2.0.0 Ok: queued as 7F3A2C0041',
      source: 'dsn',
    });
  });

  it('keeps a failed action with a 4.x.x status soft, and works with CRLF line ends', async () => {
    const crlf = fixture('dsn-hard-bounce.eml').replace('Status: 5.1.1', 'Status: 4.4.7').replace(/\n/g, '\r\n');
    expect(await parse(crlf)).toMatchObject({ kind: 'bounce', bounceType: 'soft' });
  });

  it('reads an RFC 5965 ARF report as a complaint of its feedback type', async () => {
    expect(await parse(fixture('arf-complaint.eml'))).toEqual({
      kind: 'complaint',
      feedbackType: 'abuse',
      source: 'arf',
    });
    const fraud = fixture('arf-complaint.eml').replace('Feedback-Type: abuse', 'Feedback-Type: Fraud');
    expect(await parse(fraud)).toMatchObject({ kind: 'complaint', feedbackType: 'fraud' });
  });

  it('gives nothing for mail that is not a report, a malformed one, or a report that is no complaint', async () => {
    const dsn = fixture('dsn-hard-bounce.eml');
    const arf = fixture('arf-complaint.eml');
    const cases = [
      'From: a@b.example\nSubject: out of office\n\nI am away until Monday.\n',
      dsn.replace('report-type=delivery-status', 'report-type=disposition-notification'),
      dsn.replace('Content-Type: message/delivery-status', 'Content-Type: text/plain'),
      dsn.replace('Action: failed', 'Action failed'),
      dsn.replace('Status: 5.1.1', 'Status: bounced'),
      dsn.replace('Action: failed', 'Action: relayed'),
      arf.replace('Version: 1\n', ''),
      arf.replace('Feedback-Type: abuse', 'Feedback-Type: not-spam'),
      'not even mail',
    ];
    for (const raw of cases) expect(await parse(raw)).toBeUndefined();
  });
});

describe('fieldGroups', () => {
  it('splits on blank lines, lower-cases names, unfolds continuation lines, keeps the first of a repeated field', () => {
    expect(fieldGroups('A: 1\nB-Field: two\n  words\nA: 3\n\n\nC: x')).toEqual([
      new Map([
        ['a', '1'],
        ['b-field', 'two words'],
      ]),
      new Map([['c', 'x']]),
    ]);
  });
});
