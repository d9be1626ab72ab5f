/**
 * The emails module's public face: what other modules may import from it (a dependency-cruiser
 * rule, `faces`, refuses an import of any other file of the module from outside it).
 */
export type { DeferredBatch, DeferredEmail, DeliveryComposer } from './composers.js';
export { cancelEmail, getEmail, rescheduleEmail } from './resource.js';
export type { BuiltMessage, QueuedSend } from './send.js';
export { sendBatch, sendEmail } from './send.js';
