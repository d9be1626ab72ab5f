import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { commonErrors, ErrorEnvelope, Timestamp } from '../common.js';
import { meta } from '../meta.js';
import { DomainName } from './domains.js';

const c = initContract();
const dashboard = meta({ auth: 'dashboard', permission: 'project.use' });
const Id = z.object({ id: z.string().uuid() });

/** Routes per project at most (README "Receiving mail"). */
export const MAX_INBOUND_ROUTES = 100;

/**
 * What a route does with a message it takes. Every taken message is stored (its content for the
 * project's content retention) and listed under `GET /inbound-emails`. `WEBHOOK` and `WORKFLOW`
 * also record the `email.received` event on a contact: a `WEBHOOK` route's is POSTed to the webhook
 * endpoints subscribed to `email.received`, a `WORKFLOW` route's starts the enabled workflows whose
 * trigger is `email.received` (each only that). `RECORD` records no event.
 */
export const InboundRouteAction = z.enum(['WEBHOOK', 'WORKFLOW', 'RECORD']);
export type InboundRouteAction = z.infer<typeof InboundRouteAction>;

/** `*`, an exact local part (`support`), or a prefix with a `+` tag (`reply+*`). */
export const InboundRoutePattern = z
  .string()
  .trim()
  .toLowerCase()
  .regex(
    /^(\*|[a-z0-9](?:[a-z0-9._-]{0,62})(\+\*)?)$/,
    'must be a local part (support), a prefix with a tag (reply+*), or * for every address',
  )
  .describe('`support` (exactly support@), `reply+*` (reply+anything@), or `*` (every other address of the domain)');

const inboundRouteObject = z.object({
  id: z.string().uuid(),
  domain: z.string().describe('A verified domain of the project, or a subdomain of one'),
  pattern: z.string(),
  action: InboundRouteAction,
  enabled: z.boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
type InboundRouteObject = typeof inboundRouteObject;
export interface InboundRouteSchema extends InboundRouteObject {}
export const InboundRoute: InboundRouteSchema = inboundRouteObject;

const RouteFields = z.object({
  domain: DomainName,
  pattern: InboundRoutePattern,
  action: InboundRouteAction,
  enabled: z.boolean().optional(),
});

/** A verdict of mailauth (RFC 8601 result words). */
export const AuthVerdict = z
  .string()
  .describe('`pass`, `fail`, `softfail`, `neutral`, `none`, `temperror` or `permerror`');

export const InboundAuth = z.object({
  spf: AuthVerdict,
  dkim: AuthVerdict.describe('`pass` when one signature passed'),
  dmarc: AuthVerdict,
});

export const InboundAttachment = z.object({
  filename: z.string().nullable(),
  contentType: z.string(),
  size: z.number().int(),
  url: z.string().describe('Signed download URL; it works until the content retention removes the message'),
});

export const InboundAddress = z.object({ email: z.string(), name: z.string().nullable() });

export const InboundReplyLink = z.object({
  emailId: z.string().uuid().describe('The email Pigeon sent that this message answers'),
  contactId: z.string().uuid().nullable().describe('The contact that email went to'),
  by: z.enum(['header', 'address']).describe('In-Reply-To/References, or a signed reply+token address'),
});

const inboundEmailObject = z.object({
  id: z.string().uuid(),
  routeId: z.string().uuid().nullable().describe('Null once the route is deleted'),
  contactId: z.string().uuid().nullable().describe('The sender as a contact (null for RECORD routes)'),
  messageId: z.string().nullable(),
  from: InboundAddress,
  to: z.array(z.string()).describe('The envelope recipients this route took'),
  cc: z.array(z.string()),
  subject: z.string(),
  text: z.string().nullable().describe('Null once the content retention removed it'),
  html: z.string().nullable(),
  headers: z.array(z.object({ name: z.string(), value: z.string() })),
  auth: InboundAuth,
  attachments: z.array(InboundAttachment),
  inReplyTo: InboundReplyLink.nullable(),
  receivedAt: Timestamp,
});
type InboundEmailObject = typeof inboundEmailObject;
export interface InboundEmailSchema extends InboundEmailObject {}
export const InboundEmail: InboundEmailSchema = inboundEmailObject;

export const InboundEmailQuery = z.object({
  routeId: z.string().uuid().optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  before: z.string().uuid().optional().describe('Only messages received before this one (the previous page’s last id)'),
});

const notFoundErrors = { 403: ErrorEnvelope, 404: ErrorEnvelope, ...commonErrors };

export const inboundRoutesContract = c.router(
  {
    create: {
      method: 'POST',
      path: '/inbound-routes',
      summary: `Add an inbound route (at most ${MAX_INBOUND_ROUTES} per project): mail to the pattern at the domain is taken`,
      metadata: dashboard,
      body: RouteFields,
      responses: { 201: InboundRoute, 403: ErrorEnvelope, 409: ErrorEnvelope, ...commonErrors },
    },
    list: {
      method: 'GET',
      path: '/inbound-routes',
      summary: "The project's inbound routes",
      metadata: dashboard,
      responses: { 200: z.object({ data: z.array(InboundRoute) }), 403: ErrorEnvelope, ...commonErrors },
    },
    get: {
      method: 'GET',
      path: '/inbound-routes/:id',
      summary: 'Get an inbound route',
      metadata: dashboard,
      pathParams: Id,
      responses: { 200: InboundRoute, ...notFoundErrors },
    },
    update: {
      method: 'PATCH',
      path: '/inbound-routes/:id',
      summary: 'Change an inbound route',
      metadata: dashboard,
      pathParams: Id,
      body: RouteFields.partial(),
      responses: { 200: InboundRoute, 409: ErrorEnvelope, ...notFoundErrors },
    },
    delete: {
      method: 'DELETE',
      path: '/inbound-routes/:id',
      summary: 'Remove an inbound route; the messages it took stay',
      metadata: dashboard,
      pathParams: Id,
      body: c.noBody(),
      responses: { 204: c.noBody(), ...notFoundErrors },
    },
    listEmails: {
      method: 'GET',
      path: '/inbound-emails',
      summary: 'Messages the inbound routes took, newest first',
      metadata: dashboard,
      query: InboundEmailQuery,
      responses: { 200: z.object({ data: z.array(InboundEmail) }), 403: ErrorEnvelope, ...commonErrors },
    },
    getEmail: {
      method: 'GET',
      path: '/inbound-emails/:id',
      summary: 'One message an inbound route took',
      metadata: dashboard,
      pathParams: Id,
      responses: { 200: InboundEmail, ...notFoundErrors },
    },
  },
  { strictStatusCodes: true },
);

export const inboundRouteSchemas = { InboundRoute, InboundEmail };
