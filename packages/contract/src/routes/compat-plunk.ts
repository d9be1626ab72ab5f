import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { meta } from '../meta.js';
import { ContactData } from './contacts.js';

/**
 * Plunk's v1 contact routes, with Plunk's shapes (a compatibility layer, not Pigeon's API: it is
 * left out of the SDK and the OpenAPI documents; `docs/coming-from-plunk.md` describes it).
 */
const c = initContract();

const Email = z.string().trim().toLowerCase().email().max(254);

/** Plunk's error body: `{ code, error, message, time }` (`error` is the status's reason phrase). */
export const PlunkError = z.object({
  code: z.number().int(),
  error: z.string(),
  message: z.string(),
  time: z.number().int().describe('Milliseconds since the epoch'),
});
export type PlunkError = z.infer<typeof PlunkError>;

/** A contact as Plunk's v1 API shows it: `data` is a JSON string (or null), as Plunk stores it. */
export const PlunkContact = z.object({
  id: z.string(),
  email: z.string(),
  subscribed: z.boolean(),
  data: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type PlunkContact = z.infer<typeof PlunkContact>;

const PlunkContactResult = PlunkContact.extend({ success: z.literal(true) });

/** A contact named by its id or its email (Plunk's `manage` body). */
const ContactRef = z.object({ id: z.string().uuid().optional(), email: Email.optional() });
const identified = (body: { id?: string; email?: string }) => body.id !== undefined || body.email !== undefined;
const NEEDS_REF = { message: 'give the contact’s `id` or `email`' };

export const PlunkCreateContactBody = z
  .object({ email: Email, subscribed: z.boolean(), data: ContactData.optional() })
  .strict();
export const PlunkUpdateContactBody = ContactRef.extend({
  subscribed: z.boolean().optional(),
  data: ContactData.optional(),
})
  .strict()
  .refine(identified, NEEDS_REF);
export const PlunkSubscriptionBody = ContactRef.strict().refine(identified, NEEDS_REF);
export const PlunkDeleteContactBody = z.object({ id: z.string().uuid() }).strict();

const errors = { 401: PlunkError, 404: PlunkError, 422: PlunkError, 429: PlunkError };
const auth = meta({ auth: 'secret' });

export const plunkContract = c.router(
  {
    // `count` before `:id`, so that it is not taken for an id.
    count: {
      method: 'GET',
      path: '/v1/contacts/count',
      summary: "Plunk v1: the number of the project's contacts",
      metadata: auth,
      responses: { 200: z.object({ count: z.number().int() }), ...errors },
    },
    get: {
      method: 'GET',
      path: '/v1/contacts/:id',
      summary: 'Plunk v1: one contact',
      metadata: auth,
      pathParams: z.object({ id: z.string().uuid() }),
      responses: { 200: PlunkContact, ...errors },
    },
    list: {
      method: 'GET',
      path: '/v1/contacts',
      summary: "Plunk v1: the project's contacts (at most the first 10,000, oldest first)",
      metadata: auth,
      responses: { 200: z.array(PlunkContact), ...errors },
    },
    create: {
      method: 'POST',
      path: '/v1/contacts',
      summary: 'Plunk v1: create a contact (409 when its email exists)',
      metadata: auth,
      body: PlunkCreateContactBody,
      responses: { 200: PlunkContactResult, 409: PlunkError, ...errors },
    },
    update: {
      method: 'PUT',
      path: '/v1/contacts',
      summary: 'Plunk v1: update a contact named by id or email (a falsy data value removes the key)',
      metadata: auth,
      body: PlunkUpdateContactBody,
      responses: { 200: PlunkContactResult, 409: PlunkError, ...errors },
    },
    delete: {
      method: 'DELETE',
      path: '/v1/contacts',
      summary: 'Plunk v1: delete a contact by id',
      metadata: auth,
      body: PlunkDeleteContactBody,
      responses: { 200: PlunkContactResult, ...errors },
    },
    subscribe: {
      method: 'POST',
      path: '/v1/contacts/subscribe',
      summary: 'Plunk v1: subscribe a contact named by id or email',
      metadata: auth,
      body: PlunkSubscriptionBody,
      responses: {
        200: z.object({ success: z.literal(true), contact: z.string(), subscribed: z.literal(true) }),
        ...errors,
      },
    },
    unsubscribe: {
      method: 'POST',
      path: '/v1/contacts/unsubscribe',
      summary: 'Plunk v1: unsubscribe a contact named by id or email',
      metadata: auth,
      body: PlunkSubscriptionBody,
      responses: {
        200: z.object({ success: z.literal(true), contact: z.string(), subscribed: z.literal(false) }),
        ...errors,
      },
    },
  },
  { strictStatusCodes: true },
);
