/**
 * The sending-governor module's public face: what other modules may import from it (a dependency-cruiser
 * rule, `faces`, refuses an import of any other file of the module from outside it).
 */

export type { Governor } from './governor.js';
export { createGovernor } from './governor.js';
export { domainWarmup, setDomainWarmup } from './service.js';
