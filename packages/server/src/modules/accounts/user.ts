import { raw, type Sql } from '../../db/query.js';

/** A row of `users`. */
export interface User {
  id: string;
  email: string;
  /** Null for an account that signs in only through a provider (single sign-on). */
  passwordHash: string | null;
  emailVerified: boolean;
  /** Bumped on password reset: sessions carrying an older version are refused. */
  sessionVersion: number;
  createdAt: Date;
  updatedAt: Date;
}

/** The users columns as a User (camelCase aliases) */
export const USER_COLUMNS: Sql = raw(
  'id, email, password_hash AS "passwordHash", email_verified AS "emailVerified", ' +
    'session_version AS "sessionVersion", created_at AS "createdAt", updated_at AS "updatedAt"',
);
