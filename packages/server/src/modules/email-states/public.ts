/**
 * The email-states module's public face: what other modules may import from it (a dependency-cruiser
 * rule, `faces`, refuses an import of any other file of the module from outside it).
 */
export {
  clearEmailContent,
  contentClearedSql,
  deleteExpiredEmails,
  deleteLinkClicksBetween,
  IN_FLIGHT,
} from './expiry.js';
export type { QueuedEmail, QueueStats } from './queue.js';
export { insertCampaignEmails, NOTIFY_CHANNEL, PRIORITY, queueEmail, queueStats } from './queue.js';
export type { QueueWindowSource } from './queue-window.js';
export { analyzeQueuePartitions, BULK_QUEUED, queueWindowSource, REQUEUED_PAYLOAD } from './queue-window.js';
export { requeueFailedEmails, requeueMessage } from './requeue.js';
export type { ClaimedEmail, SentEmail } from './service.js';
export {
  cancelCampaignEmails,
  cancelClaimed,
  cancelQueued,
  claimEmails,
  failExpiredClaimed,
  failExpiredQueued,
  holdCampaignEmails,
  markBounced,
  markClicked,
  markComplained,
  markDelivered,
  markOpened,
  markSent,
  reclaimAbandoned,
  releaseCampaignEmails,
  requeueUncharged,
  rescheduleQueued,
  retryLater,
} from './service.js';
