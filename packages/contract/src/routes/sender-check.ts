import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { commonErrors, ErrorEnvelope, Timestamp } from '../common.js';
import { meta } from '../meta.js';

const c = initContract();

/** A rule's outcome: `warn` works today but falls short of what mailbox providers recommend. */
export const SenderCheckStatus = z.enum(['pass', 'warn', 'fail']);
export type SenderCheckStatus = z.infer<typeof SenderCheckStatus>;

/** The rules of the sender check, in the order they are answered. */
export const SenderCheckRuleId = z.enum([
  'spf',
  'dkim',
  'dmarc_policy',
  'dmarc_alignment',
  'return_path_mx',
  'one_click_unsubscribe',
  'complaint_rate',
  'bounce_rate',
  'relay_tls',
]);
export type SenderCheckRuleId = z.infer<typeof SenderCheckRuleId>;

export const SenderCheckRule = z.object({
  id: SenderCheckRuleId,
  status: SenderCheckStatus,
  detail: z.string().describe('What was found'),
  fix: z.string().nullable().describe('What to change, when the rule does not pass'),
});

export const SenderCheck = z.object({
  domainId: z.string().uuid(),
  domain: z.string(),
  status: SenderCheckStatus.describe('The worst status of the rules'),
  checkedAt: Timestamp,
  rules: z.array(SenderCheckRule),
});

export const senderCheckContract = c.router(
  {
    check: {
      method: 'GET',
      path: '/domains/:id/check',
      summary:
        'Check a sender domain against what Gmail and Yahoo require of bulk senders: SPF, DKIM, DMARC policy and alignment, the return path MX, one-click unsubscribe, complaint and bounce rates, TLS to the relay',
      description:
        'Each rule answers pass, warn or fail with what was found and the fix. DNS is looked up now; the rates are the project health window’s (`health` of the project’s security state), per project, not per domain.',
      metadata: meta({ auth: 'dashboard', permission: 'project.use' }),
      pathParams: z.object({ id: z.string().uuid() }),
      responses: { 200: SenderCheck, 404: ErrorEnvelope, ...commonErrors },
    },
  },
  { strictStatusCodes: true },
);

export const senderCheckSchemas = { SenderCheck, SenderCheckRule };
