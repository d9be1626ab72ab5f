import type { EntityManager } from '@mikro-orm/postgresql';

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
export async function lockedForSeconds(em: EntityManager, keys: Array<[Kind, string]>): Promise<number> {
  const rows = await em.getConnection().execute<{ seconds: number }[]>(
    `SELECT ceil(extract(epoch FROM max(locked_until) - now()))::int AS seconds FROM login_failures
       WHERE key IN (${keys.map(() => '?').join(', ')}) AND locked_until > now()`,
    keys.map(([kind, value]) => `${kind}:${value}`),
  );
  return rows[0]?.seconds ?? 0;
}

/** Counts a failure atomically; the key locks when it reaches its limit within the window. */
export async function recordFailure(em: EntityManager, kind: Kind, value: string): Promise<void> {
  const rule = RULES[kind];
  await em.getConnection().execute(
    `INSERT INTO login_failures (key, failures, window_started_at) VALUES (?, 1, now())
     ON CONFLICT (key) DO UPDATE SET
       failures = CASE WHEN login_failures.window_started_at < now() - make_interval(secs => ?) THEN 1 ELSE login_failures.failures + 1 END,
       window_started_at = CASE WHEN login_failures.window_started_at < now() - make_interval(secs => ?) THEN now() ELSE login_failures.window_started_at END,
       locked_until = CASE
         WHEN login_failures.window_started_at >= now() - make_interval(secs => ?) AND login_failures.failures + 1 >= ?
         THEN now() + make_interval(secs => ?) ELSE login_failures.locked_until END`,
    [
      `${kind}:${value}`,
      rule.windowMs / 1000,
      rule.windowMs / 1000,
      rule.windowMs / 1000,
      rule.max,
      rule.lockMs / 1000,
    ],
  );
}

export async function clearFailures(em: EntityManager, kind: Kind, value: string): Promise<void> {
  await em.getConnection().execute('DELETE FROM login_failures WHERE key = ?', [`${kind}:${value}`]);
}

/** Lifts the sign-in locks of an address from every IP (a password reset proved who asks). */
export async function clearAccountFailures(em: EntityManager, email: string): Promise<void> {
  const prefix = `account-ip:${email} `;
  await em.getConnection().execute('DELETE FROM login_failures WHERE left(key, length(?)) = ?', [prefix, prefix]);
}
