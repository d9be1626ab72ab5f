import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { commonErrors, success } from '../common.js';
import { meta } from '../meta.js';

const c = initContract();

export const VerifyBody = z.object({
  email: z.string().trim().toLowerCase().email().max(254).describe('The address to check'),
});

/** A DNS answer that did not come in time is `null`: unknown, not false. */
const DnsFlag = z.boolean().nullable();

const verificationObject = z.object({
  email: z.string(),
  valid: z
    .boolean()
    .describe(
      'False only when the domain does not exist or cannot receive mail (no MX and no A/AAAA fallback, or a null MX)',
    ),
  isDisposable: z.boolean().describe('The domain is a known disposable (throwaway) mail provider'),
  isAlias: z.boolean().describe('The domain is a known forwarding/relay service (Apple Hide My Email, SimpleLogin …)'),
  isTypo: z.boolean().describe('The domain looks like a misspelling of a common one; see `suggestedEmail`'),
  isPlusAddressed: z.boolean().describe('The local part carries a `+tag`'),
  isRandomInput: z.boolean().describe('The local part looks like keyboard mashing or random characters'),
  isPersonalEmail: z.boolean().describe('The domain is a free personal mail provider (Gmail, Outlook …)'),
  domainExists: DnsFlag.describe('The domain exists in DNS; null when the resolver did not answer in time'),
  hasWebsite: DnsFlag.describe('The domain has an A or AAAA record; null when unknown'),
  hasMxRecords: DnsFlag.describe('The domain publishes MX records (a null MX counts as none); null when unknown'),
  suggestedEmail: z.string().nullable().describe('The likely intended address when `isTypo`'),
  reasons: z.array(z.string()).describe('Every finding, in words'),
});
type VerificationObject = typeof verificationObject;
/** `Verification` under a name of its own, so declaration files refer to it rather than spell it out per route. */
export interface VerificationSchema extends VerificationObject {}
export const Verification: VerificationSchema = verificationObject;

export const verifyContract = c.router(
  {
    verify: {
      method: 'POST',
      path: '/v1/verify',
      summary: 'Check an address: format, DNS (MX, A/AAAA), disposable, alias, personal provider, typos',
      description:
        'Offline lists and the configured DNS resolver only; nothing is sent to the address. DNS answers are cached for their TTL.',
      metadata: meta({ auth: 'secret' }),
      body: VerifyBody,
      responses: { 200: success(Verification), ...commonErrors },
    },
  },
  { strictStatusCodes: true },
);
