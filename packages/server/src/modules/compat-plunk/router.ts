import { ContactListQuery } from '@pigeon/contract';
import { plunkContract } from '@pigeon/contract/compat';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { callerProject } from '../../http/auth.js';
import { conflict, notFound } from '../../http/errors.js';
import { listContacts } from '../contacts/list.js';
import * as contacts from '../contacts/service.js';
import { type NativeContact, toPlunkContact, toPlunkData } from './shapes.js';

const s = initServer();

/** Plunk's `GET /v1/contacts` answers every contact at once; Pigeon stops at this many. */
const LIST_CAP = 10_000;
const PAGE = 500;

/** Plunk's v1 contact routes, each one call of the native contacts service with its shapes mapped. */
export const createPlunkRouter = (deps: AppDeps) => {
  const db = deps.db.pool;

  /** A contact named by id or email (Plunk's `manage` body), in this project, or Plunk's 404. */
  const contactOf = async (projectId: string, ref: { id?: string; email?: string }): Promise<NativeContact> => {
    if (ref.id) return contacts.getContact(db, projectId, ref.id);
    const { found } = await contacts.lookupEmails(db, projectId, [ref.email as string]);
    if (!found[0]) throw notFound('Contact');
    return contacts.getContact(db, projectId, found[0].id);
  };

  const setSubscribed = async (projectId: string, ref: { id?: string; email?: string }, subscribed: boolean) => {
    const contact = await contactOf(projectId, ref);
    await contacts.patchContact(db, projectId, contact.id, { subscribed });
    return { success: true as const, contact: contact.id };
  };

  return s.router(plunkContract, {
    count: async ({ req }) => {
      const page = await listContacts(db, callerProject(req).id, ContactListQuery.parse({ limit: 1 }));
      return { status: 200, body: { count: page.total } };
    },
    get: async ({ req, params }) => ({
      status: 200,
      body: toPlunkContact(await contacts.getContact(db, callerProject(req).id, params.id)),
    }),
    list: async ({ req }) => {
      const all: NativeContact[] = [];
      let cursor: string | undefined;
      do {
        const query = ContactListQuery.parse({ limit: PAGE, dir: 'asc', ...(cursor ? { cursor } : {}) });
        const page = await listContacts(db, callerProject(req).id, query);
        all.push(...page.data);
        cursor = page.cursor ?? undefined;
      } while (cursor && all.length < LIST_CAP);
      return { status: 200, body: all.slice(0, LIST_CAP).map(toPlunkContact) };
    },
    create: async ({ req, body }) => {
      const projectId = callerProject(req).id;
      const { found } = await contacts.lookupEmails(db, projectId, [body.email]);
      if (found.length > 0) throw conflict('Contact already exists');
      const contact = await contacts.createOrUpdateContact(db, projectId, body);
      return { status: 200, body: { success: true, ...toPlunkContact(contact) } };
    },
    update: async ({ req, body }) => {
      const projectId = callerProject(req).id;
      const contact = await contactOf(projectId, body);
      const updated = await contacts.patchContact(db, projectId, contact.id, {
        // Named by id, `email` is the new address (Plunk's PUT); named by email, it is the same one.
        email: body.id ? body.email : undefined,
        subscribed: body.subscribed,
        data: toPlunkData(body.data),
      });
      return { status: 200, body: { success: true, ...toPlunkContact(updated) } };
    },
    delete: async ({ req, body }) => {
      const projectId = callerProject(req).id;
      const contact = await contacts.getContact(db, projectId, body.id);
      await contacts.removeContact(db, projectId, contact.id);
      return { status: 200, body: { success: true, ...toPlunkContact(contact) } };
    },
    subscribe: async ({ req, body }) => ({
      status: 200,
      body: { ...(await setSubscribed(callerProject(req).id, body, true)), subscribed: true },
    }),
    unsubscribe: async ({ req, body }) => ({
      status: 200,
      body: { ...(await setSubscribed(callerProject(req).id, body, false)), subscribed: false },
    }),
  });
};
