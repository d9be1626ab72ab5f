import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { publicErrors } from '../common.js';
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

export const Health = z.object({
  status: HealthStatus,
  database: DatabaseStatus,
  version: z.string(),
  uptimeSeconds: z.number(),
});

export const DeploymentConfig = z.object({
  version: z.string(),
  publicUrl: z.string().url(),
  signupsEnabled: z.boolean(),
  oauthProviders: z.array(z.string()),
  billingEnabled: z.boolean(),
  storage: StorageKind,
  mailTransport: MailTransportKind,
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
  config: {
    method: 'GET',
    path: '/config',
    summary: "The deployment's feature flags and public URLs",
    description: 'No authentication.',
    metadata: { auth: 'none' } as const,
    responses: { 200: DeploymentConfig, ...publicErrors },
  },
});

export const systemSchemas = { Health, DeploymentConfig };
