/**
 * The deliverability module's public face: what other modules may import from it (a dependency-cruiser
 * rule, `faces`, refuses an import of any other file of the module from outside it).
 */

export type { DeliveryFeedback, FeedbackOutcome } from './feedback.js';
export { recordDeliveryFeedback } from './feedback.js';
export type { ProjectHealth } from './health.js';
export { projectHealth, resumeCampaigns } from './health.js';
export { forgetSuppressionEmails, suppressedAmong } from './suppressions.js';
export { feedbackIdFor, returnPathFor } from './verp.js';
