import type { Config } from '../config/index.js';
import type { MailTransport } from './mail-transport.js';

/** Mail Pigeon sends on its own behalf (verification, password reset, invitations). */
export async function sendSystemMail(
  deps: { config: Config; mailer: MailTransport },
  to: string,
  subject: string,
  lines: string[],
): Promise<void> {
  const text = lines.join('\n\n');
  const html = lines
    .map((line) => `<p>${escapeHtml(line).replace(/(https?:\/\/\S+)/g, '<a href="$1">$1</a>')}</p>`)
    .join('\n');
  await deps.mailer.send({ from: deps.config.auth.systemMailFrom, to, subject, text, html });
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}
