import type { JobKind } from '@pigeon/contract';
import { contract } from '@pigeon/contract';
import { initServer } from '@ts-rest/express';
import type { AppDeps } from '../../deps.js';
import { callerProject } from '../../kit/caller.js';
import { csvUpload } from '../../kit/uploads.js';
import { getJob } from '../background-jobs/public.js';
import { fieldUsage, fieldValues, listFields } from './fields.js';
import { listContacts } from './list.js';
import * as contacts from './service.js';

const s = initServer();
const BULK_KINDS: JobKind[] = ['bulk_subscribe', 'bulk_unsubscribe', 'bulk_delete', 'delete_field'];

export const createContactsRouter = (deps: AppDeps) => {
  const db = deps.db.pool;
  const accepted = (jobId: string) => ({ status: 202 as const, body: { jobId } });

  return s.router(contract.contacts, {
    fields: async ({ req }) => ({ status: 200, body: await listFields(db, callerProject(req).id) }),
    fieldValues: async ({ req, params, query }) => ({
      status: 200,
      body: await fieldValues(db, callerProject(req).id, params.field, query.limit),
    }),
    fieldUsage: async ({ req, params }) => ({
      status: 200,
      body: await fieldUsage(db, callerProject(req).id, params.field),
    }),
    deleteField: async ({ req, params }) =>
      accepted(await contacts.queueDeleteField(deps, callerProject(req).id, params.field)),
    lookup: async ({ req, body }) => ({
      status: 200,
      body: await contacts.lookupEmails(db, callerProject(req).id, body.emails),
    }),
    import: {
      // The file is parsed after authentication (route middleware runs after the global chain).
      middleware: [csvUpload],
      handler: async ({ req }) => {
        const file = (req as { file?: { buffer: Buffer } }).file;
        return accepted(await contacts.queueImport(deps, callerProject(req).id, file?.buffer));
      },
    },
    importStatus: async ({ req, params }) => ({
      status: 200,
      body: await getJob(db, callerProject(req).id, params.jobId, ['import']),
    }),
    bulkSubscribe: async ({ req, body }) =>
      accepted(await contacts.queueBulkChange(deps, callerProject(req).id, 'bulk_subscribe', body.contactIds)),
    bulkUnsubscribe: async ({ req, body }) =>
      accepted(await contacts.queueBulkChange(deps, callerProject(req).id, 'bulk_unsubscribe', body.contactIds)),
    bulkDelete: async ({ req, body }) =>
      accepted(await contacts.queueBulkChange(deps, callerProject(req).id, 'bulk_delete', body.contactIds)),
    bulkStatus: async ({ req, params }) => ({
      status: 200,
      body: await getJob(db, callerProject(req).id, params.jobId, BULK_KINDS),
    }),
    create: async ({ req, body }) => {
      const contact = await contacts.createOrUpdateContact(db, callerProject(req).id, body);
      return { status: contact._meta.isNew ? 201 : 200, body: contact };
    },
    list: async ({ req, query }) => ({ status: 200, body: await listContacts(db, callerProject(req).id, query) }),
    get: async ({ req, params }) => ({
      status: 200,
      body: await contacts.getContact(db, callerProject(req).id, params.id),
    }),
    update: async ({ req, params, body }) => ({
      status: 200,
      body: await contacts.patchContact(db, callerProject(req).id, params.id, body),
    }),
    delete: async ({ req, params }) => {
      await contacts.removeContact(db, callerProject(req).id, params.id);
      return { status: 204, body: undefined };
    },
  });
};
