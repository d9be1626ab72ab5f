import type { JobKind } from '@pigeon/contract';
import { queryRows, sql } from '../../db/query.js';
import { findInProject } from '../../db/scoped.js';
import type { Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import { AppError, notFound } from '../../kit/errors.js';
import { queueJob } from '../background-jobs/public.js';
import { applyDataRules } from './data-rules.js';
import { customKey, isStandardField } from './fields.js';
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

type QueueDeps = Pick<AppDeps, 'db' | 'scheduler'>;

/** DELETE /contacts/fields/:field: queues removing a custom data key from every contact; the job's id. */
export async function queueDeleteField(deps: QueueDeps, projectId: string, field: string): Promise<string> {
  if (isStandardField(field)) {
    throw new AppError('invalid', 'BAD_REQUEST', `${field} is a standard field and cannot be deleted`);
  }
  return queueJob(deps, projectId, 'delete_field', { key: customKey(field) });
}

/** POST /contacts/import: queues the import of the uploaded CSV (the multipart field "file"); the job's id. */
export async function queueImport(deps: QueueDeps, projectId: string, file: Buffer | undefined): Promise<string> {
  if (!file) {
    throw new AppError('unprocessable', 'VALIDATION_ERROR', 'Upload the CSV as the multipart field "file"', {
      errors: [{ field: 'file', message: 'Required', code: 'invalid_type' }],
    });
  }
  return queueJob(deps, projectId, 'import', {}, file);
}

export type BulkChange = Extract<JobKind, 'bulk_subscribe' | 'bulk_unsubscribe' | 'bulk_delete'>;

/** POST /contacts/bulk/*: queues one change to many contacts; the job's id. */
export function queueBulkChange(deps: QueueDeps, projectId: string, kind: BulkChange, contactIds: string[]) {
  return queueJob(deps, projectId, kind, { contactIds });
}
