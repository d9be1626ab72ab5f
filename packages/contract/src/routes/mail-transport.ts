import { z } from 'zod';

export const TransportState = z.enum(['up', 'down']);
export type TransportState = z.infer<typeof TransportState>;

/** The mail transport's circuit breaker as the delivery workers last recorded it. */
export const MailTransportStatus = z
  .object({
    transport: z
      .string()
      .describe("The relay's name: `smtp`, `ses` or `outbox` with one relay, else its name in `RELAYS`"),
    state: TransportState.describe('`down`: delivery is paused and probed; queued mail waits, using no attempt'),
    downSince: z.string().datetime().nullable(),
    lastError: z.string().nullable(),
    nextProbeAt: z.string().datetime().nullable(),
  })
  .describe('Relay outages cost no mail: see README, Relay outages');

/** Which route a message takes: campaign and workflow mail go by `campaign`, everything else by `transactional`. */
export const RelayStream = z.enum(['transactional', 'campaign']);
export type RelayStream = z.infer<typeof RelayStream>;

export const RelayName = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,31}$/, 'must be a relay name (lower case letters, digits, - and _)');

/** Relays in order: a message goes to the first whose circuit breaker is closed. */
export const RelayRoute = z.array(RelayName).min(1).max(16);

export const RelayRoutes = z.object({
  transactional: RelayRoute.nullable().describe(
    "Relays of `/v1/send`, batches and SMTP submission, in order; null: the installation's `RELAY_ROUTE_TRANSACTIONAL`",
  ),
  campaign: RelayRoute.nullable().describe(
    "Relays of campaign and workflow mail, in order; null: the installation's `RELAY_ROUTE_CAMPAIGN`",
  ),
});
export type RelayRoutes = z.infer<typeof RelayRoutes>;
