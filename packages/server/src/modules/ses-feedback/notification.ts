import { isUuid } from '../../db/scoped.js';

/** What one SES notification says about one email Pigeon sent. */
export type SesFeedback = {
  /** SES's MessageId, stored on the email row when SES accepted it (`provider_message_id`). */
  messageId: string | null;
  /** Pigeon's email id, read from the `Message-ID` header `<emailId@domain>` (mail sent through SES's SMTP). */
  emailId: string | null;
  recipients: string[];
} & (
  | { kind: 'bounce'; bounce: 'hard' | 'soft'; diagnostic: string | null }
  | { kind: 'complaint'; feedbackType: string | null }
  | { kind: 'delivery' }
);

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);
const list = (v: unknown): Json[] => (Array.isArray(v) ? v.map(obj) : []);

/**
 * Reads the `Message` of an SNS notification from SES: identity notifications (`notificationType`)
 * and configuration-set events (`eventType`) alike. Other kinds (Send, Open, Reject …) and
 * anything unreadable give undefined: acknowledged, nothing recorded.
 */
export function parseSesNotification(message: string): SesFeedback | undefined {
  let parsed: Json;
  try {
    parsed = obj(JSON.parse(message));
  } catch {
    return undefined;
  }
  const kind = str(parsed.notificationType) ?? str(parsed.eventType);
  const mail = obj(parsed.mail);
  const base = { messageId: str(mail.messageId), emailId: emailIdOf(mail) };
  if (!base.messageId && !base.emailId) return undefined;
  switch (kind) {
    case 'Bounce': {
      const bounce = obj(parsed.bounce);
      const recipients = list(bounce.bouncedRecipients);
      return {
        ...base,
        kind: 'bounce',
        // Permanent is a hard bounce; Transient and Undetermined may go through later.
        bounce: bounce.bounceType === 'Permanent' ? 'hard' : 'soft',
        diagnostic:
          str(recipients[0]?.diagnosticCode) ?? str(`${bounce.bounceType ?? ''} ${bounce.bounceSubType ?? ''}`.trim()),
        recipients: recipients.flatMap((r) => str(r.emailAddress) ?? []),
      };
    }
    case 'Complaint': {
      const complaint = obj(parsed.complaint);
      return {
        ...base,
        kind: 'complaint',
        feedbackType: str(complaint.complaintFeedbackType),
        recipients: list(complaint.complainedRecipients).flatMap((r) => str(r.emailAddress) ?? []),
      };
    }
    case 'Delivery':
      return { ...base, kind: 'delivery', recipients: (obj(parsed.delivery).recipients as string[]) ?? [] };
    default:
      return undefined;
  }
}

/** `<emailId@domain>` from the original headers, when SES included them. */
function emailIdOf(mail: Json): string | null {
  const header =
    str(obj(mail.commonHeaders).messageId) ??
    str(list(mail.headers).find((h) => String(h.name).toLowerCase() === 'message-id')?.value);
  const id = header ? /^<([^@>]+)@/.exec(header.trim())?.[1] : undefined;
  return id && isUuid(id) ? id : null;
}
