import { queryRows, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import { emailIdOfReplyToken } from '../rendering/public.js';

export interface ReplyLink {
  emailId: string;
  contactId: string | null;
  contactEmail: string | null;
  by: 'header' | 'address';
}

const UUID = /^<?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})@/i;

/** The email ids that Message-IDs Pigeon made name (`<emailId@sender-domain>`), In-Reply-To first. */
export function emailIdsOfMessageIds(ids: string[]): string[] {
  return ids.flatMap((id) => {
    const match = UUID.exec(id.trim());
    return match?.[1] ? [match[1].toLowerCase()] : [];
  });
}

/** The email a signed `reply+<token>@` recipient names. */
export function emailIdOfAddresses(addresses: string[], secret: string): string | undefined {
  for (const address of addresses) {
    const local = address.slice(0, address.lastIndexOf('@'));
    const plus = local.indexOf('+');
    if (plus < 0) continue;
    const emailId = emailIdOfReplyToken(local.slice(plus + 1), secret);
    if (emailId) return emailId;
  }
  return undefined;
}

/**
 * Which email of the project the message answers: the one its signed reply address names, else the
 * first of its In-Reply-To and References (newest first) that is an email of this project. Message-IDs
 * Pigeon made carry the email id, so the lookup is by primary key.
 */
export async function findReplyLink(
  db: Queryable,
  projectId: string,
  refs: { addressEmailId?: string; messageIds: string[] },
): Promise<ReplyLink | undefined> {
  const candidates = [...(refs.addressEmailId ? [refs.addressEmailId] : []), ...emailIdsOfMessageIds(refs.messageIds)];
  if (candidates.length === 0) return undefined;
  const rows = await queryRows<{ id: string; contact_id: string | null; email: string | null }>(
    db,
    sql`SELECT em.id, em.contact_id, c.email FROM emails em LEFT JOIN contacts c ON c.id = em.contact_id
        WHERE em.project_id = ${projectId}::uuid AND em.id = ANY(${candidates}::uuid[])`,
  );
  for (const [i, id] of candidates.entries()) {
    const row = rows.find((r) => r.id === id);
    if (row) {
      const by = i === 0 && refs.addressEmailId ? 'address' : 'header';
      return { emailId: row.id, contactId: row.contact_id, contactEmail: row.email, by };
    }
  }
  return undefined;
}
