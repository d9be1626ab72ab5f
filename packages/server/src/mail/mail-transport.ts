import type { MailTransportKind } from '@pigeon/contract';
import type Mail from 'nodemailer/lib/mailer/index.js';
import type { DeliveryError } from './delivery-failure.js';

export interface SentMessage {
  messageId: string;
  /** Where the local outbox stored the message; undefined for SMTP. */
  file?: string;
  /** The provider's id of the accepted message (SES's MessageId), matched against its feedback. */
  providerMessageId?: string;
  /** Recipients the relay refused at RCPT while it took the message for the others (SMTP). */
  refused?: DeliveryError[];
}

export interface MailTransport {
  kind: MailTransportKind;
  send(message: Mail.Options): Promise<SentMessage>;
  close(): void;
}
