import { queryRows, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import { notFound } from '../../kit/errors.js';
import { generateWebhookSecret } from './sign.js';

/** After a rotation, deliveries are signed with the previous secret too for this long. */
export const PREVIOUS_SECRET_GRACE_HOURS = 24;

export interface RotatedSecret {
  secret: string;
  createdAt: Date;
  /** Until when the replaced secret still signs; null when there was none. */
  previousSecretExpiresAt: Date | null;
}

/** A new secret for the project; the current one becomes the previous one. */
export async function rotateWebhookSecret(db: Queryable, projectId: string): Promise<RotatedSecret> {
  const secret = generateWebhookSecret();
  const rows = await queryRows<{ rotated_at: Date; had_previous: boolean }>(
    db,
    sql`INSERT INTO project_webhook_secrets AS w (project_id, secret)
        SELECT id, ${secret} FROM projects WHERE id = ${projectId}
        ON CONFLICT (project_id) DO UPDATE SET previous = w.secret, secret = EXCLUDED.secret, rotated_at = now()
        RETURNING w.rotated_at, w.previous IS NOT NULL AS had_previous`,
  );
  const row = rows[0];
  if (!row) throw notFound('Project');
  const expires = new Date(row.rotated_at.getTime() + PREVIOUS_SECRET_GRACE_HOURS * 3_600_000);
  return { secret, createdAt: row.rotated_at, previousSecretExpiresAt: row.had_previous ? expires : null };
}

/**
 * The secrets a delivery signs with, newest first: the current one, plus the previous one within
 * the grace period. A project that never had one gets one here (shown to nobody until a rotation
 * replaces it), so every delivery is signed.
 */
export async function webhookSecrets(db: Queryable, projectId: string): Promise<string[]> {
  const read = async () => {
    const rows = await queryRows<{ current: string | null; previous: string | null }>(
      db,
      sql`SELECT w.secret AS current,
              CASE WHEN w.rotated_at > now() - make_interval(hours => ${PREVIOUS_SECRET_GRACE_HOURS})
                   THEN w.previous END AS previous
         FROM projects p LEFT JOIN project_webhook_secrets w ON w.project_id = p.id WHERE p.id = ${projectId}`,
    );
    if (!rows[0]) throw notFound('Project');
    return rows[0];
  };
  let row = await read();
  if (!row.current) {
    await queryRows(
      db,
      sql`INSERT INTO project_webhook_secrets (project_id, secret) VALUES (${projectId}, ${generateWebhookSecret()})
          ON CONFLICT (project_id) DO NOTHING`,
    );
    row = await read(); // a concurrent first delivery may have won: everyone signs with the stored one
  }
  return [row.current, row.previous].filter((s): s is string => Boolean(s));
}
