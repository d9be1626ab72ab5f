import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import {
  BareError,
  commonErrors,
  ErrorEnvelope,
  knownOrDefault,
  OffsetQuery,
  offsetPage,
  Timestamp,
} from '../common.js';
import { meta } from '../meta.js';
import { SendWarning } from './send-options.js';

const c = initContract();
const dashboard = meta({ auth: 'dashboard', permission: 'project.use' });
const Id = z.object({ id: z.string().uuid() });

export const ContentType = z.enum(['TRANSACTIONAL', 'MARKETING', 'HEADLESS']);
export type ContentType = z.infer<typeof ContentType>;
export const Subject = z
  .string()
  .min(1)
  .max(998)
  .regex(/^[^\r\n]*$/, 'must not contain line breaks');

const templateObject = z.object({
  id: z.string().uuid(),
  name: z.string(),
  description: z.string().nullable(),
  subject: z.string(),
  body: z.string(),
  from: z.string().email(),
  fromName: z.string().nullable(),
  replyTo: z.string().email().nullable(),
  type: ContentType,
  projectId: z.string().uuid(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
type TemplateObject = typeof templateObject;
/** `Template` under a name of its own, so declaration files refer to it rather than spell it out per route. */
export interface TemplateSchema extends TemplateObject {}
export const Template: TemplateSchema = templateObject;

const TemplateFields = z.object({
  name: z.string().trim().min(1).max(200),
  description: z.string().max(2000).nullable().optional(),
  subject: Subject,
  body: z.string().min(1).max(2_000_000),
  from: z.string().trim().toLowerCase().email(),
  fromName: z.string().max(200).nullable().optional(),
  replyTo: z.string().trim().toLowerCase().email().nullable().optional(),
  type: ContentType.default('MARKETING'),
});

export const TemplateListQuery = OffsetQuery.extend({
  type: ContentType.optional(),
  search: z.string().max(200).optional().describe('Case-insensitive, on name, description and subject'),
  sort: knownOrDefault(['name', 'createdAt', 'updatedAt'] as const, 'createdAt'),
  dir: knownOrDefault(['asc', 'desc'] as const, 'desc'),
});

export const TemplatePreviewInput = z.object({
  subject: z.string().max(998),
  body: z.string().max(2_000_000).describe('HTML, or Markdown with `format: "markdown"`'),
  format: z.enum(['html', 'markdown']).default('html'),
  type: ContentType.default('MARKETING'),
  contactId: z
    .string()
    .uuid()
    .optional()
    .describe("Render with this contact's data; without it, a sample contact without data"),
  data: z.record(z.unknown()).optional().describe("One-off values over the contact's data, as `/v1/send`'s `data`"),
});

export const TemplatePreview = z.object({
  subject: z.string(),
  html: z.string().describe('The message as the recipient gets it, without open and click tracking'),
  text: z.string().describe('The plain-text part'),
  sourceHtml: z.string().describe('The body as HTML before variables are filled (Markdown converted)'),
  contact: z.object({ id: z.string().uuid().nullable(), email: z.string() }),
  warnings: z.array(SendWarning).describe('`missing_variable` for each variable that rendered empty, as `/v1/send`'),
});

export const templatesContract = c.router(
  {
    create: {
      method: 'POST',
      path: '/templates',
      summary: 'Create a template',
      metadata: meta({ auth: 'dashboard', permission: 'project.use', errorStyle: 'bare' }),
      body: TemplateFields,
      responses: { 201: Template, 400: BareError, 403: ErrorEnvelope, ...commonErrors },
    },
    list: {
      method: 'GET',
      path: '/templates',
      summary: 'List templates (offset pagination, type filter, search, sort)',
      metadata: dashboard,
      query: TemplateListQuery,
      responses: { 200: offsetPage(Template), ...commonErrors },
    },
    get: {
      method: 'GET',
      path: '/templates/:id',
      summary: 'Get a template',
      metadata: dashboard,
      pathParams: Id,
      responses: { 200: Template, 404: ErrorEnvelope, ...commonErrors },
    },
    update: {
      method: 'PATCH',
      path: '/templates/:id',
      summary: 'Update a template',
      metadata: dashboard,
      pathParams: Id,
      body: TemplateFields.partial().omit({ type: true }).extend({ type: ContentType.optional() }),
      responses: { 200: Template, 403: ErrorEnvelope, 404: ErrorEnvelope, ...commonErrors },
    },
    delete: {
      method: 'DELETE',
      path: '/templates/:id',
      summary: 'Delete a template (409 while workflow steps send it; campaigns keep their own copy)',
      metadata: dashboard,
      pathParams: Id,
      body: c.noBody(),
      responses: { 204: c.noBody(), 404: ErrorEnvelope, 409: ErrorEnvelope, ...commonErrors },
    },
    duplicate: {
      method: 'POST',
      path: '/templates/:id/duplicate',
      summary: 'Duplicate a template; returns the new template (its id is the new id)',
      metadata: dashboard,
      pathParams: Id,
      body: c.noBody(),
      responses: { 201: Template, 404: ErrorEnvelope, ...commonErrors },
    },
    preview: {
      method: 'POST',
      path: '/templates/preview',
      summary: "Render content with a contact's data through the delivery renderer (nothing is stored or sent)",
      description:
        'The subject, HTML and text a contact would receive, and the same missing-variable warnings as `/v1/send`. The unsubscribe and manage links are real signed links for the contact.',
      metadata: meta({
        auth: 'dashboard',
        permission: 'project.use',
        example: {
          subject: 'Welcome, {{firstName ?? "friend"}}',
          body: '# Hello {{firstName}}\n\nYour plan: {{plan}}.',
          format: 'markdown',
          data: { plan: 'pro' },
        },
      }),
      body: TemplatePreviewInput,
      responses: { 200: TemplatePreview, 404: ErrorEnvelope, ...commonErrors },
    },
    usage: {
      method: 'GET',
      path: '/templates/:id/usage',
      summary: 'Campaigns and workflow steps that use the template',
      metadata: dashboard,
      pathParams: Id,
      responses: {
        200: z.object({
          campaigns: z.array(z.object({ id: z.string(), name: z.string() })),
          workflowSteps: z.array(z.object({ id: z.string(), workflowId: z.string(), name: z.string() })),
        }),
        404: ErrorEnvelope,
        ...commonErrors,
      },
    },
  },
  { strictStatusCodes: true },
);

export const templateSchemas = { Template, TemplatePreview };
