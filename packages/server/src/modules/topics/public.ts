/**
 * The topics module's public face: what other modules may import from it (a dependency-cruiser
 * rule, `faces`, refuses an import of any other file of the module from outside it).
 */

export type { ContactTopicState } from './choices.js';
export { applyTopicChoices, contactTopicStates } from './choices.js';
export { isSubscribedToTopic, subscribedToTopicSql, topicMemberCondition } from './reach.js';
export { requireTopic } from './service.js';
