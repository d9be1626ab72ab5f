export { Pigeon, type PigeonOptions } from './client.js';
export { PigeonError, type PigeonErrorInit } from './errors.js';
export { generateIdempotencyKey, type IdempotencyOptions } from './idempotency.js';
export type { RequestOptions, RouteInput, SuccessBody } from './transport.js';
export type { Contract, ErrorEnvelope, FieldError, Health } from './types.js';
