/**
 * The event-log module's public face: what other modules may import from it (a dependency-cruiser
 * rule, `faces`, refuses an import of any other file of the module from outside it).
 */

export { withReach } from './reach.js';
export type { SubscriptionSource, TopicChoiceSource } from './service.js';
export {
  deleteExpiredEvents,
  eventsNamed,
  insertEmailEvents,
  insertEvents,
  insertSegmentMoveEvents,
  insertSubscriptionEvents,
  insertTopicEvents,
  recordEmailEvent,
} from './service.js';
