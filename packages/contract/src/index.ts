import { initContract } from '@ts-rest/core';
import { commonSchemas } from './common.js';
import { systemContract, systemSchemas } from './routes/system.js';

export * from './common.js';
export * from './routes/system.js';

const c = initContract();

/** The whole wire contract of Pigeon: every endpoint, defined once. */
export const contract = c.router(
  {
    system: systemContract,
  },
  { strictStatusCodes: true },
);
export type Contract = typeof contract;

/** Schemas that get a name under `components.schemas` in the OpenAPI document. */
export const namedSchemas = { ...commonSchemas, ...systemSchemas };
