import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { publicErrors } from '../common.js';

const c = initContract();

export const Health = z.object({
  status: z.enum(['ok', 'degraded']),
  database: z.enum(['up', 'down']),
  version: z.string(),
  uptimeSeconds: z.number(),
});

export const DeploymentConfig = z.object({
  version: z.string(),
  publicUrl: z.string().url(),
  signupsEnabled: z.boolean(),
  oauthProviders: z.array(z.string()),
  billingEnabled: z.boolean(),
  storage: z.enum(['local', 's3']),
  mailTransport: z.enum(['smtp', 'outbox', 'ses']),
  trackingModes: z.array(z.enum(['ENABLED', 'DISABLED', 'MARKETING_ONLY'])),
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
