/**
 * The inbound-routes module's public face: what other modules may import from it (a dependency-cruiser
 * rule, `faces`, refuses an import of any other file of the module from outside it).
 */
export { authResolver } from './auth.js';
export { clearInboundContent, deleteExpiredInbound } from './expiry.js';
export type { RouteMatch } from './match.js';
export { matchRecipient } from './match.js';
export { receiveMessage } from './receive.js';
