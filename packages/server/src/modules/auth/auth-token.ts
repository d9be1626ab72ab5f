export type TokenPurpose = 'VERIFY_EMAIL' | 'RESET_PASSWORD';

/** A row of `auth_tokens`: single-use tokens mailed to users; only their SHA-256 is stored. */
export interface AuthToken {
  tokenHash: Buffer;
  userId: string;
  purpose: TokenPurpose;
  expiresAt: Date;
  usedAt: Date | null;
  createdAt: Date;
}
