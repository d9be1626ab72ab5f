/**
 * The auth module's public face: what other modules may import from it (a dependency-cruiser
 * rule, `faces`, refuses an import of any other file of the module from outside it).
 */
export type { TokenPurpose } from './auth-token.js';
export { assertAcceptablePassword, hashPassword, verifyPassword } from './passwords.js';
export { safeNext } from './safe-next.js';
export { endSession, readSession, startSession } from './session.js';
export { clearAccountFailures, clearFailures, lockedForSeconds, recordFailure } from './throttle.js';
export { countTokensSince, hashToken, issueToken, newToken, useToken } from './tokens.js';
