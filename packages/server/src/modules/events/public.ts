/**
 * The events module's public face: what other modules may import from it (a dependency-cruiser
 * rule, `faces`, refuses an import of any other file of the module from outside it).
 */
export { isReservedEventName } from './reserved.js';
export type { EventFilter } from './service.js';
export { countEvents, EMITTED_EVENT_NAME, eventStats, listEvents, wholeDayCounts } from './service.js';
