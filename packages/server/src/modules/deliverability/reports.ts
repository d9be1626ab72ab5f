import type { DeliveryFeedback } from './feedback.js';

/** ARF feedback types that are complaints about the mail (`not-spam` and `auth-failure` are not). */
const COMPLAINT_TYPES = new Set(['abuse', 'fraud', 'virus', 'other']);

/**
 * Reads a report mailed to a VERP address: a DSN (RFC 3464, `multipart/report;
 * report-type=delivery-status`) or an ARF complaint (RFC 5965, `report-type=feedback-report`),
 * into the feedback it carries. Undefined when the message is neither, or malformed.
 */
export async function feedbackOfReport(raw: Buffer): Promise<DeliveryFeedback | undefined> {
  // Loaded on the first report: only the inbound receiver and the SES feedback need a MIME parser.
  const { simpleParser } = await import('mailparser');
  const parsed = await simpleParser(raw, { keepDeliveryStatus: true, skipHtmlToText: true, skipTextLinks: true });
  const contentType = parsed.headers.get('content-type') as { value?: string; params?: Record<string, string> };
  if (contentType?.value?.toLowerCase() !== 'multipart/report') return undefined;
  const reportType = contentType.params?.['report-type']?.toLowerCase();
  const part = (type: string) =>
    parsed.attachments.find((a) => a.contentType.toLowerCase() === type)?.content.toString('utf8');
  if (reportType === 'delivery-status') {
    const status = part('message/delivery-status') ?? part('message/global-delivery-status');
    return status === undefined ? undefined : feedbackOfDeliveryStatus(status);
  }
  if (reportType === 'feedback-report') {
    const report = part('message/feedback-report');
    if (report === undefined) return undefined;
    const [fields] = fieldGroups(report);
    const feedbackType = fields?.get('feedback-type')?.toLowerCase();
    if (!fields?.has('version') || !feedbackType || !COMPLAINT_TYPES.has(feedbackType)) return undefined;
    return { kind: 'complaint', feedbackType, source: 'arf' };
  }
  return undefined;
}

/**
 * The per-recipient fields of a delivery-status body (Pigeon sends one recipient per message, so
 * the first recipient group is the one): `failed` → hard bounce (a 4.x.x status on a failed
 * action stays soft), `delayed` → soft bounce, `delivered` → delivery. `relayed` and `expanded`
 * say nothing about the mailbox and are ignored.
 */
function feedbackOfDeliveryStatus(body: string): DeliveryFeedback | undefined {
  const [, recipient] = fieldGroups(body);
  const action = recipient?.get('action')?.toLowerCase();
  const status = recipient?.get('status') ?? null;
  if (!recipient || !action || (status !== null && !/^[245]\.\d{1,3}\.\d{1,3}$/.test(status))) return undefined;
  const diagnostic = recipient.get('diagnostic-code') ?? (status ? `status ${status}` : null);
  if (action === 'failed') {
    return { kind: 'bounce', bounceType: status?.startsWith('4.') ? 'soft' : 'hard', diagnostic, source: 'dsn' };
  }
  if (action === 'delayed') return { kind: 'bounce', bounceType: 'soft', diagnostic, source: 'dsn' };
  if (action === 'delivered') return { kind: 'delivery', detail: diagnostic, source: 'dsn' };
  return undefined;
}

/** Header-style field groups separated by blank lines; names lower-cased, folded lines unfolded. */
export function fieldGroups(body: string): Array<Map<string, string>> {
  return body
    .replace(/\r\n/g, '\n')
    .split(/\n[ \t]*\n/)
    .map((block) => block.replace(/\n[ \t]+/g, ' ').trim())
    .filter((block) => block.length > 0)
    .map((block) => {
      const fields = new Map<string, string>();
      for (const line of block.split('\n')) {
        const colon = line.indexOf(':');
        if (colon <= 0) continue;
        const name = line.slice(0, colon).trim().toLowerCase();
        if (!fields.has(name)) fields.set(name, line.slice(colon + 1).trim());
      }
      return fields;
    });
}
