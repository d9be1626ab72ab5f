import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { BareError, commonErrors, ErrorEnvelope, PageQuery, pagePage, Timestamp } from '../common.js';
import { meta } from '../meta.js';
import { ConditionTree, ConditionTreeShape } from './conditions.js';
import { Contact, ContactEmail } from './contacts.js';

const c = initContract();

export const SegmentType = z.enum(['DYNAMIC', 'STATIC']);
export type SegmentType = z.infer<typeof SegmentType>;

const segmentObject = z.object({
  id: z.string().uuid(),
  name: z.string(),
  description: z.string().nullable(),
  type: SegmentType,
  condition: ConditionTreeShape.nullable().describe('The membership rule of a DYNAMIC segment; null for STATIC'),
  trackMembership: z.boolean(),
  slug: z
    .string()
    .describe('Fixed at creation: entry and exit events are `segment.<slug>.entry` / `segment.<slug>.exit`'),
  memberCount: z.number().int().describe('Cached count; see memberCountAt'),
  memberCountAt: Timestamp.nullable().describe('When memberCount was last counted'),
  projectId: z.string().uuid(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
type SegmentObject = typeof segmentObject;
/** `Segment` under a name of its own, so declaration files refer to it rather than spell it out per route. */
export interface SegmentSchema extends SegmentObject {}
export const Segment: SegmentSchema = segmentObject;
export type Segment = z.infer<typeof Segment>;

const SegmentId = z.object({ id: z.string().uuid() });
const Name = z.string().trim().min(1).max(100);
const Description = z.string().max(500).nullable();

export const SegmentCreate = z.object({
  name: Name,
  description: Description.optional(),
  type: SegmentType.default('DYNAMIC'),
  condition: ConditionTree.nullable().optional().describe('Required for DYNAMIC; refused for STATIC'),
  trackMembership: z.boolean().default(false),
});

export const SegmentUpdate = z.object({
  name: Name.optional(),
  description: Description.optional(),
  condition: ConditionTree.optional().describe('DYNAMIC segments only'),
  trackMembership: z.boolean().optional(),
});

const Emails = z.array(ContactEmail).min(1).max(1000);

export const MemberResultStatus = z.enum(['added', 'created', 'already_member', 'removed', 'not_member', 'not_found']);
export type MemberResultStatus = z.infer<typeof MemberResultStatus>;

export const MemberResult = z.object({
  email: z.string(),
  status: MemberResultStatus,
  contactId: z.string().uuid().nullable(),
});

export const MembersChange = z.object({
  results: z.array(MemberResult).describe('One entry per distinct email, in request order'),
  memberCount: z.number().int(),
});

export const SegmentComputeResult = z.object({
  entered: z.number().int().describe('Contacts that joined (one entry event each)'),
  exited: z.number().int().describe('Contacts that left (one exit event each)'),
  memberCount: z.number().int(),
});

export const ConditionCount = z.object({
  count: z.number().int(),
  sampled: z
    .boolean()
    .describe('True for a project over SEGMENT_LIVE_COUNT_EXACT_UP_TO contacts: counted on a sample and extrapolated'),
  sampleSize: z.number().int().describe('Contacts looked at (all of them when not sampled)'),
});

const Named = z.array(z.object({ id: z.string().uuid(), name: z.string() }));
export const SegmentUsage = z.object({ campaigns: Named, workflows: Named, segments: Named });

const notFound = { 404: ErrorEnvelope };
/** Condition queries run under a statement timeout (SEGMENT_QUERY_TIMEOUT_SECONDS). */
const timeout = { 503: ErrorEnvelope };
const dashboard = meta({ auth: 'dashboard', permission: 'project.use' });

export const segmentsContract = c.router(
  {
    create: {
      method: 'POST',
      path: '/segments',
      summary: 'Create a segment',
      description:
        'A DYNAMIC segment (the default) needs a condition; a STATIC segment must not have one. Invalid input answers the bare `{ error }` 400.',
      metadata: meta({ auth: 'dashboard', permission: 'project.use', errorStyle: 'bare' }),
      body: SegmentCreate,
      responses: { 201: Segment, 400: BareError, ...timeout, ...commonErrors },
    },
    list: {
      method: 'GET',
      path: '/segments',
      summary: 'All segments of the project, newest first',
      metadata: dashboard,
      responses: { 200: z.array(Segment), ...commonErrors },
    },
    get: {
      method: 'GET',
      path: '/segments/:id',
      summary: 'Get a segment with its cached member count',
      metadata: dashboard,
      pathParams: SegmentId,
      responses: { 200: Segment, ...notFound, ...commonErrors },
    },
    update: {
      method: 'PATCH',
      path: '/segments/:id',
      summary: 'Update name, description, condition (DYNAMIC only) or trackMembership',
      metadata: dashboard,
      pathParams: SegmentId,
      body: SegmentUpdate,
      responses: { 200: Segment, 400: ErrorEnvelope, ...notFound, ...timeout, ...commonErrors },
    },
    delete: {
      method: 'DELETE',
      path: '/segments/:id',
      summary: 'Delete a segment (409 while a campaign, segment or workflow still uses it)',
      metadata: dashboard,
      pathParams: SegmentId,
      body: c.noBody(),
      responses: { 204: c.noBody(), 409: ErrorEnvelope, ...notFound, ...commonErrors },
    },
    count: {
      method: 'POST',
      path: '/segments/count',
      summary: 'Count the contacts a condition matches now, without saving a segment',
      description:
        'For condition builders: the condition `POST /segments` takes (400 `INVALID_CONDITION` naming the filter), evaluated live over the project under the segments statement timeout. A project over `SEGMENT_LIVE_COUNT_EXACT_UP_TO` contacts (100,000 by default) is counted on a repeatable page sample of about that many and the count extrapolated (`sampled: true`); saving a segment counts exactly.',
      metadata: dashboard,
      body: z.object({ condition: ConditionTree }),
      responses: { 200: ConditionCount, 400: ErrorEnvelope, ...timeout, ...commonErrors },
    },
    usage: {
      method: 'GET',
      path: '/segments/:id/usage',
      summary: 'Campaigns, workflows and other segments that reference the segment (what blocks its deletion)',
      metadata: dashboard,
      pathParams: SegmentId,
      responses: { 200: SegmentUsage, ...notFound, ...commonErrors },
    },
    contacts: {
      method: 'GET',
      path: '/segments/:id/contacts',
      summary: 'Members, page by page (evaluated live for DYNAMIC segments)',
      metadata: dashboard,
      pathParams: SegmentId,
      query: PageQuery,
      responses: { 200: pagePage(Contact), ...notFound, ...timeout, ...commonErrors },
    },
    addMembers: {
      method: 'POST',
      path: '/segments/:id/members',
      summary: 'Add up to 1,000 emails to a STATIC segment',
      metadata: dashboard,
      pathParams: SegmentId,
      body: z.object({
        emails: Emails,
        createMissing: z.boolean().default(false).describe('Create contacts for unknown emails'),
        subscribed: z.boolean().optional().describe('Subscription state of contacts created here (default true)'),
      }),
      responses: { 200: MembersChange, 400: ErrorEnvelope, ...notFound, ...commonErrors },
    },
    removeMembers: {
      method: 'DELETE',
      path: '/segments/:id/members',
      summary: 'Remove up to 1,000 emails from a STATIC segment',
      metadata: dashboard,
      pathParams: SegmentId,
      body: z.object({ emails: Emails }),
      responses: { 200: MembersChange, 400: ErrorEnvelope, ...notFound, ...commonErrors },
    },
    compute: {
      method: 'POST',
      path: '/segments/:id/compute',
      summary: 'Recompute a tracked segment; records entry and exit events for the differences',
      metadata: dashboard,
      pathParams: SegmentId,
      body: c.noBody(),
      responses: { 200: SegmentComputeResult, 400: ErrorEnvelope, ...notFound, ...timeout, ...commonErrors },
    },
    refresh: {
      method: 'POST',
      path: '/segments/:id/refresh',
      summary: 'Recount members; no events, no membership changes',
      metadata: dashboard,
      pathParams: SegmentId,
      body: c.noBody(),
      responses: { 200: Segment, ...notFound, ...timeout, ...commonErrors },
    },
  },
  { strictStatusCodes: true },
);

export const segmentSchemas = { Segment, MemberResult, MembersChange, SegmentComputeResult };
