import type { MemberResult } from '@pigeon/contract';
import type pg from 'pg';
import type { z } from 'zod';
import { queryRows, sql } from '../../db/query.js';
import { inTransaction } from '../../db/sql.js';
import { badRequest } from '../../kit/errors.js';
import { createMissingContacts } from '../contacts/public.js';
import { applyMoves } from './membership.js';
import { findSegment, type SegmentRow } from './service.js';

type Result = z.infer<typeof MemberResult>;

async function staticSegment(pool: pg.Pool, projectId: string, id: string): Promise<SegmentRow> {
  const segment = await findSegment(pool, projectId, id);
  if (segment.type !== 'STATIC') {
    throw badRequest('Members are added and removed only on STATIC segments; a DYNAMIC segment follows its condition');
  }
  return segment;
}

const distinct = (emails: string[]) => [...new Set(emails)];

async function contactIds(db: pg.PoolClient, projectId: string, emails: string[]) {
  const rows = await queryRows<{ id: string; email: string }>(
    db,
    sql`SELECT id, email FROM contacts WHERE project_id = ${projectId}::uuid AND email = ANY(${emails}::text[])`,
  );
  return new Map(rows.map((r) => [r.email, r.id]));
}

async function memberCount(db: pg.PoolClient, projectId: string, id: string): Promise<number> {
  await queryRows(db, sql`UPDATE segments SET member_count_at = now() WHERE id = ${id}`);
  return (await findSegment(db, projectId, id)).member_count;
}

/** Adds emails to a STATIC segment (creating contacts when asked); one result per distinct email. */
export async function addMembers(
  pool: pg.Pool,
  projectId: string,
  id: string,
  input: { emails: string[]; createMissing: boolean; subscribed?: boolean },
) {
  await staticSegment(pool, projectId, id);
  const emails = distinct(input.emails);
  return inTransaction(pool, async (client) => {
    const created = new Set<string>();
    if (input.createMissing) {
      const emailsCreated = await createMissingContacts(client, projectId, emails, input.subscribed ?? true);
      for (const email of emailsCreated) created.add(email);
    }
    const ids = await contactIds(client, projectId, emails);
    const moves = [...ids.values()].map((contactId) => ({ segmentId: id, contactId, move: 'entry' as const }));
    const entered = new Set((await applyMoves(client, projectId, moves)).map((m) => m.contactId));
    const results = emails.map((email): Result => {
      const contactId = ids.get(email) ?? null;
      if (!contactId) return { email, status: 'not_found', contactId };
      if (!entered.has(contactId)) return { email, status: 'already_member', contactId };
      return { email, status: created.has(email) ? 'created' : 'added', contactId };
    });
    return { results, memberCount: await memberCount(client, projectId, id) };
  });
}

export async function removeMembers(pool: pg.Pool, projectId: string, id: string, input: { emails: string[] }) {
  await staticSegment(pool, projectId, id);
  const emails = distinct(input.emails);
  return inTransaction(pool, async (client) => {
    const ids = await contactIds(client, projectId, emails);
    const moves = [...ids.values()].map((contactId) => ({ segmentId: id, contactId, move: 'exit' as const }));
    const removed = new Set((await applyMoves(client, projectId, moves)).map((m) => m.contactId));
    const results = emails.map((email): Result => {
      const contactId = ids.get(email) ?? null;
      if (!contactId) return { email, status: 'not_found', contactId };
      return { email, status: removed.has(contactId) ? 'removed' : 'not_member', contactId };
    });
    return { results, memberCount: await memberCount(client, projectId, id) };
  });
}
