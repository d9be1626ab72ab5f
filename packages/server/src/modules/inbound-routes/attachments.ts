import { simpleParser } from 'mailparser';
import { queryRows, sql } from '../../db/query.js';
import type { AppDeps } from '../../deps.js';
import { signToken, verifyToken } from '../rendering/public.js';

const KIND = 'inbound-attachment';

/** A signed link to one attachment of a received message, valid until `expires` (ms). */
export function attachmentUrl(deps: AppDeps, inboundEmailId: string, index: number, expires: number): string {
  const token = signToken(
    KIND,
    { i: inboundEmailId, n: index, x: Math.floor(expires / 1000) },
    deps.config.secrets.linkSigning,
  );
  return `${deps.config.http.publicUrl}/inbound/attachments/${token}`;
}

export interface AttachmentFile {
  filename: string | null;
  contentType: string;
  content: Buffer;
}

/**
 * The attachment a signed link names, read from the stored message; undefined when the link is not
 * Pigeon's, has expired, or the content retention has removed the message.
 */
export async function readAttachment(deps: AppDeps, token: string): Promise<AttachmentFile | undefined> {
  const claims = verifyToken(KIND, token, deps.config.secrets.linkSigning);
  const { i, n, x } = claims ?? {};
  if (typeof i !== 'string' || typeof n !== 'number' || typeof x !== 'number' || x * 1000 < deps.clock.nowMs())
    return undefined;
  if (!/^[0-9a-f-]{36}$/.test(i)) return undefined;
  const [row] = await queryRows<{ raw: Buffer | null }>(
    deps.db.pool,
    sql`SELECT raw FROM inbound_emails WHERE id = ${i}::uuid`,
  );
  if (!row?.raw) return undefined;
  const attachment = (await simpleParser(row.raw)).attachments[n];
  if (!attachment) return undefined;
  return { filename: attachment.filename ?? null, contentType: attachment.contentType, content: attachment.content };
}
