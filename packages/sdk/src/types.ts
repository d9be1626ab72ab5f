import type { z } from 'zod';
import type * as wire from './contract.js';

// Wire types, all derived from the contract. Declared as aliases (not re-exported) because the
// contract names are both a zod schema and a type, and the bundled .d.ts must export only the type.
export type Contract = wire.Contract;
export type ErrorEnvelope = wire.ErrorEnvelope;
export type FieldError = wire.FieldError;
export type Health = z.infer<typeof wire.Health>;
export type DeploymentConfig = z.infer<typeof wire.DeploymentConfig>;
