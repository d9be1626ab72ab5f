/**
 * The background-jobs module's public face: what other modules may import from it (a dependency-cruiser
 * rule, `faces`, refuses an import of any other file of the module from outside it).
 */
export { queueJob } from './queue.js';
export type { JobHandler } from './runner.js';
export { changeInBatches, PermanentJobError } from './runner.js';
export type { JobError } from './service.js';
export { getJob, recordBatch, setJobTotal } from './service.js';
