/**
 * What `bench/baselines` reuse to do the same database work as Pigeon without its HTTP stack
 * (express, ts-rest, zod, logging, middleware): the key lookup with its rate-limit count, the track
 * statement and the send service.
 * Not part of the server's API.
 */

export { seedHistory } from './db/history-seed.js';
export { runMigrations } from './db/migrator.js';
export { moveUnpartitionedHistory } from './db/partitions.js';
export { systemClock } from './kit/clock.js';
export { foldFinishedHours } from './modules/analytics/rollup.js';
export { sendEmail } from './modules/emails/send.js';
export { trackWithKey } from './modules/events/track.js';
export { findProjectByKey } from './modules/projects/key-lookup.js';
export { hashKey, keyTypeOf } from './modules/projects/keys.js';
