/**
 * The accounts module's public face: what other modules may import from it (a dependency-cruiser
 * rule, `faces`, refuses an import of any other file of the module from outside it).
 */
export {
  acceptPasswordResetRequest,
  claimWithVerifiedEmail,
  createPasswordlessUser,
  createUser,
  findUserByEmail,
  findUserById,
  login,
  requestVerification,
  resetPassword,
  signup,
  toUserDto,
  verifyEmail,
} from './service.js';
export { requireSessionUser } from './session-user.js';
export type { User } from './user.js';
