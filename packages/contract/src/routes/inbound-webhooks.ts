import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { ErrorEnvelope, publicErrors } from '../common.js';
import { meta } from '../meta.js';

const c = initContract();

const webhookReceived = z.object({
  received: z.literal(true),
  type: z.string().describe('The kind of message that was processed'),
});
type WebhookReceivedObject = typeof webhookReceived;
export interface WebhookReceivedSchema extends WebhookReceivedObject {}
export const WebhookReceived: WebhookReceivedSchema = webhookReceived;

const inboundBody = z.record(z.unknown());
type InboundBodyObject = typeof inboundBody;
interface InboundBodySchema extends InboundBodyObject {}
const InboundBody: InboundBodySchema = inboundBody;

export const inboundWebhooksContract = c.router(
  {
    stripe: {
      method: 'POST',
      path: '/webhooks/incoming/stripe',
      summary: 'Stripe events (signed with STRIPE_WEBHOOK_SECRET); not called by applications',
      description:
        'The `Stripe-Signature` header is checked against the raw body: a forged or stale (older than 5 minutes) payload is 400 INVALID_SIGNATURE, an event already processed is 409. 404 BILLING_DISABLED when billing is off.',
      metadata: meta({ auth: 'none' }),
      body: InboundBody,
      responses: {
        200: WebhookReceived,
        404: ErrorEnvelope,
        409: ErrorEnvelope,
        422: ErrorEnvelope,
        ...publicErrors,
      },
    },
    sns: {
      method: 'POST',
      path: '/webhooks/sns',
      summary: 'Amazon SNS: SES bounce, complaint and delivery notifications, and subscription confirmations',
      description:
        'The SNS signature is verified against the signing certificate (fetched only from sns.<region>.amazonaws.com, cached). A bad signature, a certificate elsewhere or a message older than an hour is 400 INVALID_SIGNATURE.',
      metadata: meta({ auth: 'none' }),
      body: InboundBody,
      responses: { 200: WebhookReceived, 422: ErrorEnvelope, 502: ErrorEnvelope, ...publicErrors },
    },
  },
  { strictStatusCodes: true },
);
