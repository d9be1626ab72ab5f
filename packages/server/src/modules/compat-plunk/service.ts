import { ContactListQuery } from '@pigeon/contract';
import type { PlunkContact } from '@pigeon/contract/compat';
import type { Queryable } from '../../db/sql.js';
import { conflict, notFound } from '../../kit/errors.js';
import * as contacts from '../contacts/public.js';
import { listContacts } from '../contacts/public.js';
import { type NativeContact, toPlunkContact, toPlunkData } from './shapes.js';

/** Plunk's `GET /v1/contacts` answers every contact at once; Pigeon stops at this many. */
const LIST_CAP = 10_000;
const PAGE = 500;

type Ref = { id?: string; email?: string };

/** A contact named by id or email (Plunk's `manage` body), in this project, or the 404. */
async function contactOf(db: Queryable, projectId: string, ref: Ref): Promise<NativeContact> {
  if (ref.id) return contacts.getContact(db, projectId, ref.id);
  const { found } = await contacts.lookupEmails(db, projectId, [ref.email as string]);
  if (!found[0]) throw notFound('Contact');
  return contacts.getContact(db, projectId, found[0].id);
}

export async function countPlunkContacts(db: Queryable, projectId: string): Promise<number> {
  return (await listContacts(db, projectId, ContactListQuery.parse({ limit: 1 }))).total;
}

/** Every contact, oldest first, page by page through the native list (at most LIST_CAP). */
export async function listPlunkContacts(db: Queryable, projectId: string): Promise<PlunkContact[]> {
  const all: NativeContact[] = [];
  let cursor: string | undefined;
  do {
    const query = ContactListQuery.parse({ limit: PAGE, dir: 'asc', ...(cursor ? { cursor } : {}) });
    const page = await listContacts(db, projectId, query);
    all.push(...page.data);
    cursor = page.cursor ?? undefined;
  } while (cursor && all.length < LIST_CAP);
  return all.slice(0, LIST_CAP).map(toPlunkContact);
}

export async function getPlunkContact(db: Queryable, projectId: string, id: string): Promise<PlunkContact> {
  return toPlunkContact(await contacts.getContact(db, projectId, id));
}

/** Plunk's create: a 409 when the email exists (the native create would update it). */
export async function createPlunkContact(
  db: Queryable,
  projectId: string,
  body: { email: string; subscribed: boolean; data?: Record<string, unknown> },
): Promise<PlunkContact> {
  const { found } = await contacts.lookupEmails(db, projectId, [body.email]);
  if (found.length > 0) throw conflict('Contact already exists');
  return toPlunkContact(await contacts.createOrUpdateContact(db, projectId, body));
}

export async function updatePlunkContact(
  db: Queryable,
  projectId: string,
  body: Ref & { subscribed?: boolean; data?: Record<string, unknown> },
): Promise<PlunkContact> {
  const contact = await contactOf(db, projectId, body);
  const updated = await contacts.patchContact(db, projectId, contact.id, {
    // Named by id, `email` is the new address (Plunk's PUT); named by email, it is the same one.
    email: body.id ? body.email : undefined,
    subscribed: body.subscribed,
    data: toPlunkData(body.data),
  });
  return toPlunkContact(updated);
}

/** Deletes the contact; answers it as it was. */
export async function deletePlunkContact(db: Queryable, projectId: string, id: string): Promise<PlunkContact> {
  const contact = await contacts.getContact(db, projectId, id);
  await contacts.removeContact(db, projectId, contact.id);
  return toPlunkContact(contact);
}

/** Subscribes or unsubscribes the contact; answers its id. */
export async function setPlunkSubscription(db: Queryable, projectId: string, ref: Ref, subscribed: boolean) {
  const contact = await contactOf(db, projectId, ref);
  await contacts.patchContact(db, projectId, contact.id, { subscribed });
  return contact.id;
}
