import nodemailer from 'nodemailer';
import type { SesConfig } from '../config/index.js';
import type { MailTransport } from './mail-transport.js';

/** SES answers that say the message itself will never be accepted: recorded as a bounce, not retried. */
const PERMANENT = new Set(['MessageRejected', 'MailFromDomainNotVerifiedException', 'BadRequestException']);
/** SES answers about the account or the rate, not the message: the transport pauses (DESIGN.md §9). */
const TRANSPORT = new Set([
  'TooManyRequestsException',
  'ThrottlingException',
  'Throttling',
  'LimitExceededException',
  'SendingPausedException',
  'AccountSuspendedException',
  'UnrecognizedClientException',
  'InvalidClientTokenId',
  'ExpiredTokenException',
  'AccessDeniedException',
]);

/**
 * Amazon SES through its v2 API with raw MIME (nodemailer's SES transport): the message is built
 * and DKIM-signed by Pigeon exactly as for SMTP, so Pigeon's headers (List-Unsubscribe, tracking,
 * Feedback-ID) and its own per-domain DKIM signature reach the recipient unchanged; SES adds its
 * own signature next to it when Easy DKIM is on. SES rewrites `Message-ID`, which nodemailer leaves
 * out of the DKIM signature; SES's MessageId comes back as `providerMessageId` and is stored on the
 * email, to match SNS feedback.
 */
export function sesTransport(ses: SesConfig): MailTransport {
  // The AWS SDK is loaded on the first send: a process that never sends (the API) never loads it.
  let opened:
    | Promise<{ sesClient: { destroy(): void }; transporter: ReturnType<typeof nodemailer.createTransport> }>
    | undefined;
  const open = () => {
    opened ??= import('@aws-sdk/client-sesv2').then(({ SESv2Client, SendEmailCommand }) => {
      // One attempt per call: the delivery worker retries with its own backoff (and records the attempts).
      const sesClient = new SESv2Client({ region: ses.region, credentials: ses.credentials, maxAttempts: 1 });
      return { sesClient, transporter: nodemailer.createTransport({ SES: { sesClient, SendEmailCommand } }) };
    });
    return opened;
  };
  const extra = ses.configurationSet ? { ConfigurationSetName: ses.configurationSet } : {};
  return {
    kind: 'ses',
    async send(message) {
      try {
        const { transporter } = await open();
        const info = await transporter.sendMail({ ...message, ses: extra } as typeof message);
        return { messageId: info.messageId, providerMessageId: String(info.response) };
      } catch (err) {
        throw asDeliveryError(err as Error & { name: string; $metadata?: { httpStatusCode?: number } });
      }
    },
    close: () => {
      void opened?.then(({ transporter, sesClient }) => {
        transporter.close();
        sesClient.destroy();
      });
    },
  };
}

/**
 * In the delivery worker's terms (mail/delivery-failure.ts): a 5xx `responseCode` is a bounce;
 * throttling, the account, credentials, a 5xx of the API itself, a timeout or a network error are
 * the transport's failure; anything else (a message that cannot be built, say) is the message's.
 */
function asDeliveryError(
  err: Error & {
    name: string;
    responseCode?: number;
    transportFailure?: boolean;
    $metadata?: { httpStatusCode?: number };
  },
) {
  const status = err.$metadata?.httpStatusCode;
  if (PERMANENT.has(err.name)) err.responseCode = 554;
  // No HTTP answer at all: a network error (its `code`, ECONNREFUSED…, is classified as such) or a timeout.
  else if (TRANSPORT.has(err.name) || err.name === 'TimeoutError' || status === 429 || (status ?? 0) >= 500) {
    err.transportFailure = true;
  }
  return err;
}
