import { z } from 'zod';

export const TransportState = z.enum(['up', 'down']);
export type TransportState = z.infer<typeof TransportState>;

/** The mail transport's circuit breaker as the delivery workers last recorded it. */
export const MailTransportStatus = z
  .object({
    transport: z.string().describe('`smtp`, `ses` or `outbox`'),
    state: TransportState.describe('`down`: delivery is paused and probed; queued mail waits, using no attempt'),
    downSince: z.string().datetime().nullable(),
    lastError: z.string().nullable(),
    nextProbeAt: z.string().datetime().nullable(),
  })
  .describe('Relay outages cost no mail: see README, Relay outages');
