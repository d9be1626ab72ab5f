import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { publicErrors } from '../common.js';
import { MailTransportStatus, RelayName } from './mail-transport.js';
import { TrackingMode } from './projects.js';

const c = initContract();

export const HealthStatus = z.enum(['ok', 'degraded']);
export type HealthStatus = z.infer<typeof HealthStatus>;
export const DatabaseStatus = z.enum(['up', 'down']);
export type DatabaseStatus = z.infer<typeof DatabaseStatus>;
export const StorageKind = z.enum(['local', 's3']);
export type StorageKind = z.infer<typeof StorageKind>;
export const MailTransportKind = z.enum(['smtp', 'outbox', 'ses']);
export type MailTransportKind = z.infer<typeof MailTransportKind>;

const healthObject = z.object({
  status: HealthStatus,
  database: DatabaseStatus,
  version: z.string(),
  uptimeSeconds: z.number(),
  mailTransport: MailTransportStatus.optional().describe(
    'Absent when the database does not answer. `lastError` is always null here (it names the relay; this route is public): members read it in the project security endpoint. With several relays: the first of the transactional route',
  ),
  relays: z
    .array(MailTransportStatus)
    .optional()
    .describe(
      'Every configured relay, in `RELAYS` order (one with a single transport); absent when the database does not answer',
    ),
});
type HealthObject = typeof healthObject;
/** Named (declarations refer to it from the 200 and the 503). */
export interface HealthSchema extends HealthObject {}
export const Health: HealthSchema = healthObject;

/** What `/health/ready` checks; each failing one is a reason in a 503. */
export const ReadinessCheck = z.enum(['database', 'migrations', 'workers', 'change_feed']);
export type ReadinessCheck = z.infer<typeof ReadinessCheck>;

export const ReadinessStatus = z.enum(['ready', 'not_ready']);
export type ReadinessStatus = z.infer<typeof ReadinessStatus>;

const readinessObject = z.object({
  status: ReadinessStatus,
  /** Empty when ready. */
  reasons: z.array(z.object({ check: ReadinessCheck, message: z.string() })),
  version: z.string(),
});
type ReadinessObject = typeof readinessObject;
/** Named (declarations refer to it from the 200 and the 503). */
export interface ReadinessSchema extends ReadinessObject {}
export const Readiness: ReadinessSchema = readinessObject;

export const DeploymentConfig = z.object({
  version: z.string(),
  publicUrl: z.string().url(),
  signupsEnabled: z.boolean(),
  oauthProviders: z.array(z.string()),
  billingEnabled: z.boolean(),
  storage: StorageKind,
  mailTransport: MailTransportKind.describe('The kind of the first relay of the transactional route'),
  relays: z
    .array(z.object({ name: RelayName, kind: MailTransportKind }))
    .describe("The installation's relays: the names a project's `relayRoutes` may use"),
  relayRoutes: z
    .object({ transactional: z.array(RelayName), campaign: z.array(RelayName) })
    .describe("The installation's route per stream (RELAY_ROUTE_TRANSACTIONAL, RELAY_ROUTE_CAMPAIGN)"),
  trackingModes: z.array(TrackingMode),
});

export const systemContract = c.router({
  health: {
    method: 'GET',
    path: '/health',
    summary: 'Liveness and database reachability',
    metadata: { auth: 'none' } as const,
    description: 'No authentication. Returns 503 with `status: degraded` when the database does not answer.',
    responses: { 200: Health, 503: Health, ...publicErrors },
  },
  ready: {
    method: 'GET',
    path: '/health/ready',
    summary: 'Readiness: database, schema, workers and change feed',
    metadata: { auth: 'none' } as const,
    description:
      'No authentication. 200 when this Pigeon can do its work; 503 with the reasons while the database is unreachable, migrations are pending, no worker process has a fresh heartbeat, or a change-feed consumer lags more than READY_MAX_FEED_LAG_SECONDS.',
    responses: { 200: Readiness, 503: Readiness, ...publicErrors },
  },
  config: {
    method: 'GET',
    path: '/config',
    summary: "The deployment's feature flags and public URLs",
    description: 'No authentication.',
    metadata: { auth: 'none' } as const,
    responses: { 200: DeploymentConfig, ...publicErrors },
  },
});

export const systemSchemas = { Health, Readiness, DeploymentConfig, MailTransportStatus };
