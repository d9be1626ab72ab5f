import { uuidv7 } from 'uuidv7';
import { EMAIL_QUEUED_CHANNEL } from '../../db/channels.js';
import { queryRows, raw, sql } from '../../db/query.js';
import { inTransaction, type Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import { sendSystemMail } from '../../mail/system-mail.js';
import { holdCampaignEmails, releaseCampaignEmails } from '../email-states/public.js';

type HealthConfig = AppDeps['config']['deliverability']['health'];

export interface ProjectHealth {
  sample: number;
  windowSize: number;
  bounceRate: number;
  complaintRate: number;
  bounceThreshold: number;
  complaintThreshold: number;
  minimumSample: number;
  campaignsPaused: boolean;
  pausedAt: string | null;
  pausedReason: string | null;
}

/**
 * Rates over the rolling window: the project's last `window` messages that went out (sent or
 * bounced at delivery), newest first. Bounces are hard bounces (a soft bounce is temporary).
 */
async function windowRates(db: Queryable, projectId: string, window: number) {
  const [row] = await queryRows<{ n: number; bounces: number; complaints: number }>(
    db,
    sql`SELECT count(*)::int AS n, count(bounced_at)::int AS bounces, count(complained_at)::int AS complaints
        FROM (SELECT bounced_at, complained_at FROM emails
              WHERE project_id = ${projectId}::uuid AND (sent_at IS NOT NULL OR bounced_at IS NOT NULL)
              ORDER BY created_at DESC LIMIT ${window}) recent`,
  );
  const n = row?.n ?? 0;
  return {
    sample: n,
    bounceRate: n === 0 ? 0 : (row?.bounces ?? 0) / n,
    complaintRate: n === 0 ? 0 : (row?.complaints ?? 0) / n,
  };
}

export async function projectHealth(db: Queryable, projectId: string, config: HealthConfig): Promise<ProjectHealth> {
  const rates = await windowRates(db, projectId, config.window);
  const [pause] = await queryRows<{ campaigns_paused_at: Date | null; campaigns_paused_reason: string | null }>(
    db,
    sql`SELECT paused_at AS campaigns_paused_at, reason AS campaigns_paused_reason
        FROM campaign_pauses WHERE project_id = ${projectId}::uuid`,
  );
  return {
    ...rates,
    windowSize: config.window,
    bounceThreshold: config.bounceThreshold,
    complaintThreshold: config.complaintThreshold,
    minimumSample: config.minSample,
    campaignsPaused: Boolean(pause?.campaigns_paused_at),
    pausedAt: pause?.campaigns_paused_at ? new Date(pause.campaigns_paused_at).toISOString() : null,
    pausedReason: pause?.campaigns_paused_reason ?? null,
  };
}

/** What is over a threshold, in words; undefined when the project is healthy (or the sample too small). */
function breach(rates: { sample: number; bounceRate: number; complaintRate: number }, config: HealthConfig) {
  if (rates.sample < config.minSample) return undefined;
  const pct = (x: number) => `${(x * 100).toFixed(2)}%`;
  if (rates.bounceRate > config.bounceThreshold)
    return `bounce rate ${pct(rates.bounceRate)} over the last ${rates.sample} messages is above ${pct(config.bounceThreshold)}`;
  if (rates.complaintRate > config.complaintThreshold)
    return `complaint rate ${pct(rates.complaintRate)} over the last ${rates.sample} messages is above ${pct(config.complaintThreshold)}`;
  return undefined;
}

/**
 * Called after a hard bounce or a complaint is recorded: when the project's rates cross a
 * threshold, campaigns are paused (queued campaign mail is held, scheduled campaigns wait, new
 * campaign sends are refused), the pause is listed among the project's suspensions, and the
 * owners are told by email. Transactional and workflow mail keep flowing. True when it paused now.
 */
export async function checkProjectHealth(deps: AppDeps, projectId: string): Promise<boolean> {
  const config = deps.config.deliverability.health;
  // Already paused (a bounce storm keeps calling this): no window to count.
  const [state] = await queryRows<{ paused: boolean }>(
    deps.db.pool,
    sql`SELECT EXISTS (SELECT 1 FROM campaign_pauses WHERE project_id = p.id) AS paused FROM projects p
        WHERE p.id = ${projectId}::uuid`,
  );
  if (!state || state.paused) return false;
  const reason = breach(await windowRates(deps.db.pool, projectId, config.window), config);
  if (!reason) return false;
  const paused = await inTransaction(deps.db.pool, async (client) => {
    // The project row's lock waits for a campaign dispatch under way (it holds FOR SHARE), so the
    // hold below sees the mail it queued; a dispatch after it reads the pause once the lock is free.
    const [project] = await queryRows<{ name: string }>(
      client,
      sql`WITH project AS (SELECT id, name FROM projects WHERE id = ${projectId}::uuid FOR NO KEY UPDATE),
          paused AS (
            INSERT INTO campaign_pauses (project_id, reason) SELECT id, ${reason} FROM project
            ON CONFLICT (project_id) DO NOTHING RETURNING project_id
          )
          SELECT name FROM project JOIN paused ON paused.project_id = project.id`,
    );
    if (!project) return undefined;
    await holdCampaignEmails(client, projectId);
    await queryRows(
      client,
      sql`INSERT INTO project_suspensions (id, project_id, reason)
          VALUES (${uuidv7()}, ${projectId}::uuid, ${`Campaigns paused: ${reason}`})`,
    );
    return project;
  });
  if (!paused) return false;
  deps.logger.warn({ projectId, reason }, 'campaigns paused: deliverability threshold crossed');
  await tellOwners(deps, projectId, paused.name, reason);
  return true;
}

async function tellOwners(deps: AppDeps, projectId: string, projectName: string, reason: string) {
  const owners = await queryRows<{ email: string }>(
    deps.db.pool,
    sql`SELECT u.email FROM memberships m JOIN users u ON u.id = m.user_id
        WHERE m.project_id = ${projectId}::uuid AND m.role = 'OWNER'`,
  );
  for (const owner of owners) {
    await sendSystemMail(deps, owner.email, `Campaigns of ${projectName} are paused`, [
      `Pigeon paused campaign sending for the project "${projectName}": the ${reason}.`,
      'Transactional and workflow mail keep flowing. Queued campaign mail is held and scheduled campaigns wait.',
      'Addresses that bounced or complained are already suppressed. Check your lists (how were these addresses collected?), then resume campaigns on the project security page.',
      `${deps.config.http.publicUrl}/projects/${projectId}/security`,
    ]).catch((err) => deps.logger.error({ err, projectId }, 'could not tell an owner about the campaign pause'));
  }
}

/** Lifts the pause: held campaign mail is due again and scheduled campaigns start when due. */
export async function resumeCampaigns(db: Queryable, projectId: string): Promise<void> {
  await queryRows(
    db,
    sql`WITH resumed AS (
       DELETE FROM campaign_pauses WHERE project_id = ${projectId}::uuid RETURNING project_id AS id
     ) ${releaseCampaignEmails(raw('SELECT id FROM resumed'))}`,
  );
  await db.query(`NOTIFY ${EMAIL_QUEUED_CHANNEL}`);
}
