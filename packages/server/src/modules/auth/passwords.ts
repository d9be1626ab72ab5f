import { validationFailed } from '../../kit/errors.js';

// Loaded on first use (sign-up, sign-in, password change), not in every process at start: the
// argon2 addon and the 49,000-password list cost memory that the hot paths never use.
const argon2 = () => import('@node-rs/argon2');

export const hashPassword = async (password: string) => (await argon2()).hash(password);

// Verified against when the email is unknown, so a miss costs the same time as a wrong password.
let dummyHash: Promise<string> | undefined;

/** A missing hash (unknown email, or an account without a password) never matches, in the same time. */
export async function verifyPassword(passwordHash: string | null | undefined, password: string): Promise<boolean> {
  const { hash, verify } = await argon2();
  dummyHash ??= hash('pigeon-timing-equaliser');
  const ok = await verify(passwordHash ?? (await dummyHash), password).catch(() => false);
  return ok && typeof passwordHash === 'string';
}

/** zxcvbn-ts's list of the ~49,000 most common passwords (offline, shipped in the npm package). */
let common: Promise<Set<string>> | undefined;
const commonPasswords = () => {
  common ??= import('@zxcvbn-ts/language-common').then(
    ({ dictionary }) => new Set(dictionary['passwords-common'].map((p) => p.toLowerCase())),
  );
  return common;
};

/**
 * The rules the contract's length check cannot express: not a common password (any case), not the
 * account's own email address or its local part.
 */
export async function passwordProblem(password: string, email: string): Promise<string | undefined> {
  const lower = password.trim().toLowerCase();
  if ((await commonPasswords()).has(lower)) return 'is one of the most common passwords; choose another';
  const address = email.toLowerCase();
  if (lower === address || lower === address.split('@')[0]) return 'must not be your email address';
  return undefined;
}

/** `passwordProblem` as a 422 on the `password` field. */
export async function assertAcceptablePassword(password: string, email: string): Promise<void> {
  const problem = await passwordProblem(password, email);
  if (problem) throw validationFailed([{ field: 'password', message: problem, code: 'weak_password' }]);
}
