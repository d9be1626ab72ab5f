import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import type { SesConfig } from '../config/index.js';
import { connectCoalescedRelay } from './coalesced-socket.js';
import type { DeliveryError } from './delivery-failure.js';
import type { MailTransport, SentMessage } from './mail-transport.js';
import { sesTransport } from './ses.js';

/**
 * What `last_error` keeps of a message taken for some recipients and refused for others:
 * `refused at RCPT: cc@example.com (550 No such user)`, or null when every recipient was accepted.
 */
export function refusedRecipients(sent: SentMessage): string | null {
  if (!sent.refused?.length) return null;
  const each = sent.refused.map((e) => `${e.recipient} (${e.response ?? e.message})`);
  return `refused at RCPT: ${each.join('; ')}`.slice(0, 500);
}

/** Amazon SES when `SES_REGION` is set, pooled SMTP when `SMTP_URL` is; otherwise the local outbox (a real `.eml` per message). */
export function createMailTransport(mail: {
  smtpUrl: string | undefined;
  outboxDir: string;
  ses?: SesConfig;
}): MailTransport {
  if (mail.ses) return sesTransport(mail.ses);
  if (mail.smtpUrl) return smtpTransport(mail.smtpUrl);
  return outboxTransport(mail.outboxDir);
}

function smtpTransport(smtpUrl: string): MailTransport {
  const url = new URL(smtpUrl);
  url.searchParams.set('pool', 'true');
  // maxRequeues 0: a message whose connection closes mid-send is not sent again by nodemailer's pool
  // behind Pigeon's back; the attempt fails, and Pigeon's own retry (one attempt at a time) decides.
  const transporter = nodemailer.createTransport({
    url: url.toString(),
    getSocket: connectCoalescedRelay,
    maxRequeues: 0,
  } as Parameters<typeof nodemailer.createTransport>[0]);
  return {
    kind: 'smtp',
    async send(message) {
      const info = await transporter.sendMail(message);
      // nodemailer resolves when at least one recipient was accepted; the others' RCPT errors come along.
      return { messageId: info.messageId, refused: (info as { rejectedErrors?: DeliveryError[] }).rejectedErrors };
    },
    close: () => transporter.close(),
  };
}

function outboxTransport(outboxDir: string): MailTransport {
  const transporter = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    kind: 'outbox',
    async send(message) {
      const info = await transporter.sendMail(message);
      await mkdir(outboxDir, { recursive: true, mode: 0o700 });
      const safeId = info.messageId.replace(/[^A-Za-z0-9@._-]/g, '');
      const file = join(outboxDir, `${new Date().toISOString().replace(/[:.]/g, '-')}_${safeId}.eml`);
      // Written under another name, then renamed: whoever watches the outbox never reads half a
      // message. 0600: it holds reset tokens and signed links.
      await writeFile(`${file}.partial`, info.message as Buffer, { mode: 0o600 });
      await rename(`${file}.partial`, file);
      return { messageId: info.messageId, file };
    },
    close: () => transporter.close(),
  };
}
