/** The counts a mail report's rates are read from: each a number of messages. */
export interface MailCounts {
  sent: number;
  delivered: number;
  opened: number;
  clicked: number;
  bounced: number;
  complained: number;
  unsubscribed: number;
}

const rate = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 10_000);

/** Each rate of a mail report (campaign stats, analytics), as a share of the mail sent, to 4 places. */
export const ratesOf = (c: MailCounts) => ({
  delivery: rate(c.delivered, c.sent),
  open: rate(c.opened, c.sent),
  click: rate(c.clicked, c.sent),
  bounce: rate(c.bounced, c.sent),
  complaint: rate(c.complained, c.sent),
  unsubscribe: rate(c.unsubscribed, c.sent),
});
