import { ContactListQuery, type DnsRecordStatus } from '@pigeon/contract';
import type {
  ResendBatchBody,
  ResendCreateContactBody,
  ResendSendBody,
  ResendUpdateContactBody,
} from '@pigeon/contract/compat';
import type { z } from 'zod';
import type { Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import { notFound, validationFailed } from '../../kit/errors.js';
import * as contacts from '../contacts/public.js';
import { listContacts } from '../contacts/public.js';
import { listDomains } from '../domains/public.js';
import { cancelEmail, getEmail, rescheduleEmail, sendBatch, sendEmail } from '../emails/public.js';
import { toNativeContact, toResendContact } from './contacts.js';
import { toNativeSend, toResendEmail } from './emails.js';

type Sent = { emails: Array<{ email: string }>; skipped: Array<{ contact: { email: string } }> };

/**
 * Resend's id for a send: the email of its first recipient (Pigeon makes one email per recipient;
 * the others are in `GET /emails`). A send that made no email (every address suppressed) is refused.
 */
function sentId(sent: Sent, prefix = ''): { id: string } {
  const first = sent.emails[0];
  if (first) return { id: first.email };
  const skipped = sent.skipped.map((s) => s.contact.email).join(', ');
  throw validationFailed([
    { field: `${prefix}to`, message: `nothing was sent: ${skipped} suppressed`, code: 'suppressed' },
  ]);
}

export async function sendResendEmail(deps: AppDeps, projectId: string, body: ResendSendBody) {
  return sentId(await sendEmail(deps, projectId, toNativeSend(body)));
}

/** All or nothing, as `POST /v1/send/batch`. */
export async function sendResendBatch(deps: AppDeps, projectId: string, body: z.output<typeof ResendBatchBody>) {
  const messages = body.map((message, i) => toNativeSend(message, `${i}.`));
  const sent = await sendBatch(deps, projectId, messages, messages);
  return { data: sent.results.map((r, i) => sentId(r, `${i}.`)) };
}

export async function getResendEmail(db: Queryable, projectId: string, id: string) {
  return toResendEmail(await getEmail(db, projectId, id));
}

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

export async function rescheduleResendEmail(
  db: Queryable,
  projectId: string,
  id: string,
  scheduledAt: string,
  now: Date,
) {
  if (!ISO_DATE_TIME.test(scheduledAt) || Number.isNaN(Date.parse(scheduledAt))) {
    throw validationFailed([{ field: 'scheduled_at', message: 'must be an ISO 8601 date-time', code: 'invalid_date' }]);
  }
  const email = await rescheduleEmail(db, projectId, id, new Date(scheduledAt), now);
  return { object: 'email' as const, id: email.id };
}

export async function cancelResendEmail(db: Queryable, projectId: string, id: string) {
  const email = await cancelEmail(db, projectId, id);
  return { object: 'email' as const, id: email.id };
}

type NativeDomain = Awaited<ReturnType<typeof listDomains>>[number];

const toResendDomain = (d: NativeDomain) => ({
  id: d.id,
  name: d.domain,
  status: d.status,
  created_at: d.createdAt,
  region: 'self-hosted',
});

const RECORD_STATUS: Record<DnsRecordStatus, string> = {
  verified: 'verified',
  unchecked: 'not_started',
  missing: 'failed',
  mismatch: 'failed',
};

export async function listResendDomains(deps: Pick<AppDeps, 'db' | 'config'>, projectId: string) {
  return (await listDomains(deps, projectId, projectId)).map(toResendDomain);
}

export async function getResendDomain(deps: Pick<AppDeps, 'db' | 'config'>, projectId: string, id: string) {
  const domain = (await listDomains(deps, projectId, projectId)).find((d) => d.id === id);
  if (!domain) throw notFound('Domain');
  const records = domain.records.map((r) => ({
    record: r.purpose.toUpperCase(),
    name: r.name,
    type: r.type,
    ttl: 'Auto',
    status: RECORD_STATUS[r.status],
    value: r.value,
  }));
  return { object: 'domain' as const, ...toResendDomain(domain), records };
}

/** A contact named by its id or its email (Resend takes either in the path), in this project. */
async function findContact(db: Queryable, projectId: string, idOrEmail: string) {
  if (!idOrEmail.includes('@')) return contacts.getContact(db, projectId, idOrEmail);
  const { found } = await contacts.lookupEmails(db, projectId, [idOrEmail.trim().toLowerCase()]);
  if (!found[0]) throw notFound('Contact');
  return contacts.getContact(db, projectId, found[0].id);
}

export async function createResendContact(db: Queryable, projectId: string, body: ResendCreateContactBody) {
  const contact = await contacts.createOrUpdateContact(db, projectId, { email: body.email, ...toNativeContact(body) });
  return { object: 'contact' as const, id: contact.id };
}

/** The newest contacts first, `limit` of them. */
export async function listResendContacts(db: Queryable, projectId: string, limit: number) {
  const page = await listContacts(db, projectId, ContactListQuery.parse({ limit }));
  return { object: 'list' as const, has_more: page.hasMore, data: page.data.map(toResendContact) };
}

export async function getResendContact(db: Queryable, projectId: string, idOrEmail: string) {
  return { object: 'contact' as const, ...toResendContact(await findContact(db, projectId, idOrEmail)) };
}

export async function updateResendContact(
  db: Queryable,
  projectId: string,
  idOrEmail: string,
  body: ResendUpdateContactBody,
) {
  const contact = await findContact(db, projectId, idOrEmail);
  await contacts.patchContact(db, projectId, contact.id, toNativeContact(body));
  return { object: 'contact' as const, id: contact.id };
}

export async function removeResendContact(db: Queryable, projectId: string, idOrEmail: string) {
  const contact = await findContact(db, projectId, idOrEmail);
  await contacts.removeContact(db, projectId, contact.id);
  return { object: 'contact' as const, contact: contact.id, deleted: true as const };
}
