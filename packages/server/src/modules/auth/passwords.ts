import { hash, verify } from '@node-rs/argon2';
import { dictionary } from '@zxcvbn-ts/language-common';
import { validationFailed } from '../../http/errors.js';

export const hashPassword = (password: string) => hash(password);

// Verified against when the email is unknown, so a miss costs the same time as a wrong password.
let dummyHash: Promise<string> | undefined;

export async function verifyPassword(passwordHash: string | undefined, password: string): Promise<boolean> {
  dummyHash ??= hash('pigeon-timing-equaliser');
  const ok = await verify(passwordHash ?? (await dummyHash), password).catch(() => false);
  return ok && passwordHash !== undefined;
}

/** zxcvbn-ts's list of the ~49,000 most common passwords (offline, shipped in the npm package). */
let common: Set<string> | undefined;
const commonPasswords = () => {
  common ??= new Set(dictionary['passwords-common'].map((p) => p.toLowerCase()));
  return common;
};

/**
 * The rules the contract's length check cannot express: not a common password (any case), not the
 * account's own email address or its local part.
 */
export function passwordProblem(password: string, email: string): string | undefined {
  const lower = password.trim().toLowerCase();
  if (commonPasswords().has(lower)) return 'is one of the most common passwords; choose another';
  const address = email.toLowerCase();
  if (lower === address || lower === address.split('@')[0]) return 'must not be your email address';
  return undefined;
}

/** `passwordProblem` as a 422 on the `password` field. */
export function assertAcceptablePassword(password: string, email: string): void {
  const problem = passwordProblem(password, email);
  if (problem) throw validationFailed([{ field: 'password', message: problem, code: 'weak_password' }]);
}
