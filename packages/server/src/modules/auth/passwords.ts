import { hash, verify } from '@node-rs/argon2';

export const hashPassword = (password: string) => hash(password);

// Verified against when the email is unknown, so a miss costs the same time as a wrong password.
let dummyHash: Promise<string> | undefined;

export async function verifyPassword(passwordHash: string | undefined, password: string): Promise<boolean> {
  dummyHash ??= hash('pigeon-timing-equaliser');
  const ok = await verify(passwordHash ?? (await dummyHash), password).catch(() => false);
  return ok && passwordHash !== undefined;
}
