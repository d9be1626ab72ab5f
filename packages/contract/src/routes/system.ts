import { initContract } from '@ts-rest/core';
import { z } from 'zod';
import { ErrorEnvelope, publicErrors } from '../common.js';

const c = initContract();

export const Health = z.object({
  status: z.enum(['ok', 'degraded']),
  database: z.enum(['up', 'down']),
  version: z.string(),
  uptimeSeconds: z.number(),
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
});

export const systemSchemas = { Health, ErrorEnvelope };
