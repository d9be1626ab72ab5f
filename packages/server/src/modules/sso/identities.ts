import type { OAuthProviderId } from '@pigeon/contract';
import type pg from 'pg';
import { queryRows, sql } from '../../db/query.js';
import { inTransaction, type Queryable } from '../../db/sql.js';
import { conflict, notFound } from '../../kit/errors.js';

interface IdentityRow {
  provider: OAuthProviderId;
  email: string;
  created_at: Date;
  last_used_at: Date;
}

/** The account a provider's subject is linked to, noting the sign-in (and the address it gave now). */
export async function signInWithIdentity(
  db: Queryable,
  provider: string,
  subject: string,
  email: string,
): Promise<string | undefined> {
  const rows = await queryRows<{ user_id: string }>(
    db,
    sql`UPDATE user_identities SET last_used_at = now(), email = ${email}
        WHERE provider = ${provider} AND subject = ${subject} RETURNING user_id`,
  );
  return rows[0]?.user_id;
}

/** Links a provider's subject to an account; one identity per provider and account. */
export async function linkIdentity(
  db: Queryable,
  userId: string,
  provider: string,
  subject: string,
  email: string,
): Promise<void> {
  const rows = await queryRows(
    db,
    sql`INSERT INTO user_identities (provider, subject, user_id, email) VALUES (${provider}, ${subject}, ${userId}, ${email})
        ON CONFLICT DO NOTHING RETURNING provider`,
  );
  if (rows.length === 0) {
    throw conflict('This Pigeon account is already linked to another identity at this provider', {
      suggestion: 'Sign in with the identity already linked, or unlink it first.',
    });
  }
}

export async function listSignInMethods(db: Queryable, userId: string) {
  const [user] = await queryRows<{ has_password: boolean }>(
    db,
    sql`SELECT password_hash IS NOT NULL AS has_password FROM users WHERE id = ${userId}`,
  );
  const identities = await queryRows<IdentityRow>(
    db,
    sql`SELECT provider, email, created_at, last_used_at FROM user_identities WHERE user_id = ${userId} ORDER BY created_at`,
  );
  return {
    hasPassword: user?.has_password ?? false,
    identities: identities.map((i) => ({
      provider: i.provider,
      email: i.email,
      linkedAt: i.created_at.toISOString(),
      lastUsedAt: i.last_used_at.toISOString(),
    })),
  };
}

/**
 * Unlinks a provider unless it is the account's last way to sign in, and answers the ways left. The
 * user's row is locked first, so two unlinks at once cannot both pass the check and leave nothing.
 */
export async function unlinkIdentity(pool: pg.Pool, userId: string, provider: OAuthProviderId) {
  await inTransaction(pool, async (tx) => {
    const [user] = await queryRows<{ has_password: boolean }>(
      tx,
      sql`SELECT password_hash IS NOT NULL AS has_password FROM users WHERE id = ${userId} FOR UPDATE`,
    );
    const linked = await queryRows<{ provider: string }>(
      tx,
      sql`SELECT provider FROM user_identities WHERE user_id = ${userId}`,
    );
    if (!linked.some((i) => i.provider === provider)) throw notFound('Linked identity');
    if (!user?.has_password && linked.length === 1) {
      throw conflict('This is the only way left to sign in to this account', {
        details: { reason: 'LAST_SIGN_IN_METHOD' },
        suggestion: 'Set a password (POST /auth/request-password-reset) or link another provider first.',
      });
    }
    await queryRows(tx, sql`DELETE FROM user_identities WHERE user_id = ${userId} AND provider = ${provider}`);
  });
  return listSignInMethods(pool, userId);
}
