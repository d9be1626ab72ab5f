import { queryRows, runStatement, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';

/**
 * Failures (or, for `reset-ip`, requests) allowed per key within the window before the key is
 * locked out for `lockMs`. Sign-in failures lock an address *from one IP* (`account-ip`) and an IP
 * (`ip`), never an address everywhere: an attacker who knows an address cannot lock its owner out
 * (the owner signs in from another IP), and one who spreads guesses over many IPs gets 5 per IP
 * per 15 minutes against passwords of at least 10 characters that are not common ones.
 */
const RULES = {
  'account-ip': { max: 5, windowMs: 15 * 60_000, lockMs: 15 * 60_000 },
  ip: { max: 50, windowMs: 15 * 60_000, lockMs: 15 * 60_000 },
  'reset-ip': { max: 10, windowMs: 15 * 60_000, lockMs: 15 * 60_000 },
} as const;

type Kind = keyof typeof RULES;

/** Seconds until the key may try again, or 0. Shared by every process through the database. */
export async function lockedForSeconds(db: Queryable, keys: Array<[Kind, string]>): Promise<number> {
  const [row] = await queryRows<{ seconds: number }>(
    db,
    sql`SELECT ceil(extract(epoch FROM max(locked_until) - now()))::int AS seconds FROM login_failures
        WHERE key = ANY(${keys.map(([kind, value]) => `${kind}:${value}`)}::text[]) AND locked_until > now()`,
  );
  return row?.seconds ?? 0;
}

/** Counts a failure atomically; the key locks when it reaches its limit within the window. */
export async function recordFailure(db: Queryable, kind: Kind, value: string): Promise<void> {
  const rule = RULES[kind];
  const windowStart = sql`now() - make_interval(secs => ${rule.windowMs / 1000})`;
  await runStatement(
    db,
    sql`INSERT INTO login_failures (key, failures, window_started_at) VALUES (${`${kind}:${value}`}, 1, now())
        ON CONFLICT (key) DO UPDATE SET
          failures = CASE WHEN login_failures.window_started_at < ${windowStart} THEN 1 ELSE login_failures.failures + 1 END,
          window_started_at = CASE WHEN login_failures.window_started_at < ${windowStart} THEN now() ELSE login_failures.window_started_at END,
          locked_until = CASE
            WHEN login_failures.window_started_at >= ${windowStart} AND login_failures.failures + 1 >= ${rule.max}
            THEN now() + make_interval(secs => ${rule.lockMs / 1000}) ELSE login_failures.locked_until END`,
  );
}

export async function clearFailures(db: Queryable, kind: Kind, value: string): Promise<void> {
  await runStatement(db, sql`DELETE FROM login_failures WHERE key = ${`${kind}:${value}`}`);
}

/** Lifts the sign-in locks of an address from every IP (a password reset proved who asks). */
export async function clearAccountFailures(db: Queryable, email: string): Promise<void> {
  const prefix = `account-ip:${email} `;
  await runStatement(db, sql`DELETE FROM login_failures WHERE left(key, length(${prefix})) = ${prefix}`);
}
