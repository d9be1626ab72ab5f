import { queryRows, sql } from '../../db/query.js';
import { findInProject } from '../../db/scoped.js';
import type { Queryable } from '../../db/sql.js';
import { notFound } from '../../http/errors.js';
import { applyDataRules } from './data-rules.js';
import { type ContactRow, deleteContact, toContactDto, updateContact, upsertContact } from './rows.js';

/** POST /contacts: upsert by email; a new contact is subscribed unless told otherwise. */
export async function createOrUpdateContact(
  db: Queryable,
  projectId: string,
  input: { email: string; subscribed?: boolean; data?: Record<string, unknown> },
) {
  const { contact, isNew } = await upsertContact(db, {
    projectId,
    email: input.email,
    subscribed: input.subscribed,
    subscribedIfNew: true,
    changes: applyDataRules(input.data, { storeObjects: true }),
    source: 'api',
  });
  return { ...toContactDto(contact), _meta: { isNew, isUpdate: !isNew } };
}

export async function getContact(db: Queryable, projectId: string, id: string) {
  return toContactDto(await findInProject<ContactRow>(db, 'contacts', projectId, id, 'Contact'));
}

export async function patchContact(
  db: Queryable,
  projectId: string,
  id: string,
  patch: { email?: string; subscribed?: boolean; data?: Record<string, unknown> },
) {
  // Another contact's email is a unique violation: the error handler answers 409.
  const row = await updateContact(db, projectId, id, {
    email: patch.email,
    subscribed: patch.subscribed,
    changes: applyDataRules(patch.data, { storeObjects: true }),
    source: 'api',
  });
  if (!row) throw notFound('Contact');
  return toContactDto(row);
}

export async function removeContact(db: Queryable, projectId: string, id: string): Promise<void> {
  if (!(await deleteContact(db, projectId, id))) throw notFound('Contact');
}

export async function lookupEmails(db: Queryable, projectId: string, emails: string[]) {
  const unique = [...new Set(emails)];
  const rows = await queryRows<{ email: string; id: string }>(
    db,
    sql`SELECT email, id FROM contacts WHERE project_id = ${projectId} AND email = ANY(${unique}::text[])`,
  );
  const found = new Set(rows.map((r) => r.email));
  return { found: rows, missing: unique.filter((e) => !found.has(e)) };
}
