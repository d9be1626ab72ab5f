/**
 * The projects module's public face: what other modules may import from it (a dependency-cruiser
 * rule, `faces`, refuses an import of any other file of the module from outside it).
 */
export { deferredKey, findProjectByKey, requireKnownKey, settleKeyCheck } from './key-lookup.js';
export { keyTypeOf } from './keys.js';
export { acceptInvitation, hasPendingInvitation } from './members.js';
export { refuseIfDisabled } from './service.js';
