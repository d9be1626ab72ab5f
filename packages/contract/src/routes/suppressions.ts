import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { CursorQuery, commonErrors, cursorPage, ErrorEnvelope, Timestamp } from '../common.js';
import { meta } from '../meta.js';
import { Verification } from './verify.js';

const c = initContract();

export const SuppressionReason = z.enum(['hard_bounce', 'complaint']);
export type SuppressionReason = z.infer<typeof SuppressionReason>;

const suppressionObject = z.object({
  id: z.string().uuid(),
  email: z.string(),
  reason: SuppressionReason,
  detail: z.string().nullable().describe('The diagnostic code of the bounce, or the feedback type of the complaint'),
  emailId: z.string().uuid().nullable().describe('The email whose bounce or complaint caused it'),
  createdAt: Timestamp,
});
type SuppressionObject = typeof suppressionObject;
/** `Suppression` under a name of its own, so declaration files refer to it rather than spell it out per route. */
export interface SuppressionSchema extends SuppressionObject {}
export const Suppression: SuppressionSchema = suppressionObject;

export const SuppressionListQuery = CursorQuery.extend({
  email: z.string().trim().toLowerCase().max(254).optional().describe('Only this address'),
});

export const suppressionsContract = c.router(
  {
    list: {
      method: 'GET',
      path: '/suppressions',
      summary: 'Addresses this project no longer sends to (hard bounces and complaints), newest first',
      metadata: meta({ auth: 'dashboard', permission: 'project.use' }),
      query: SuppressionListQuery,
      responses: { 200: cursorPage(Suppression), ...commonErrors },
    },
    delete: {
      method: 'DELETE',
      path: '/suppressions/:id',
      summary:
        'Lift a suppression: later sends go to the address again (the contact stays unsubscribed until it opts in)',
      metadata: meta({ auth: 'dashboard', permission: 'project.use' }),
      pathParams: z.object({ id: z.string().uuid() }),
      body: c.noBody(),
      responses: { 204: c.noBody(), 404: ErrorEnvelope, ...commonErrors },
    },
  },
  { strictStatusCodes: true },
);

/** The deliverability schemas named in the OpenAPI document (verify and suppressions). */
export const deliverabilitySchemas = { Verification, Suppression };
