import { queryRows, raw, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import type { ProjectRef } from '../../kit/caller.js';
import { readTransportStatus } from '../../mail/transport-status.js';
import { projectHealth, resumeCampaigns } from '../deliverability/public.js';

const WINDOW_DAYS = 30;

/**
 * Bounce and complaint rates over the last 30 days, from the stored email records, and the
 * deliverability health over the last messages (which pauses campaigns above its thresholds).
 */
export async function securityState(deps: AppDeps, project: ProjectRef) {
  const db = deps.db.pool;
  const counts = await mailCounts(db, project.id);
  const suspensions = await queryRows<{ created_at: Date; reason: string }>(
    db,
    sql`SELECT created_at, reason FROM project_suspensions WHERE project_id = ${project.id}
        ORDER BY created_at DESC LIMIT 10`,
  );
  const rate = (n: number) => (counts.sent === 0 ? 0 : n / counts.sent);
  return {
    windowDays: WINDOW_DAYS,
    emailsSent: counts.sent,
    bounces: counts.bounces,
    complaints: counts.complaints,
    bounceRate: rate(counts.bounces),
    complaintRate: rate(counts.complaints),
    disabled: project.disabled,
    disabledReason: project.disabledReason ?? null,
    recentSuspensions: suspensions.map((s) => ({ at: new Date(s.created_at).toISOString(), reason: s.reason })),
    mailTransport: await readTransportStatus(deps.db.pool, deps.relays.system.name),
    health: await projectHealth(deps.db.pool, project.id, deps.config.deliverability.health),
  };
}

async function mailCounts(db: Queryable, projectId: string) {
  const [row] = await queryRows<{ sent: number; bounces: number; complaints: number }>(
    db,
    sql`SELECT count(*) FILTER (WHERE sent_at IS NOT NULL)::int AS sent,
            count(*) FILTER (WHERE bounced_at IS NOT NULL)::int AS bounces,
            count(*) FILTER (WHERE complained_at IS NOT NULL)::int AS complaints
     FROM emails WHERE project_id = ${projectId} AND created_at > now() - make_interval(days => ${WINDOW_DAYS})`,
  );
  return row ?? { sent: 0, bounces: 0, complaints: 0 };
}

const STEPS = [
  { id: 'verify_domain', title: 'Verify a sender domain', table: 'domains', where: 'verified_at IS NOT NULL' },
  { id: 'send_first_email', title: 'Send your first email', table: 'emails', where: 'true' },
  { id: 'track_first_event', title: 'Track your first event', table: 'events', where: 'true' },
  { id: 'add_contacts', title: 'Add contacts', table: 'contacts', where: 'true' },
] as const;

/** Each onboarding step is done once a matching row exists in the project's data. */
export async function setupState(db: Queryable, projectId: string) {
  const steps = [];
  for (const step of STEPS) {
    const found = await queryRows(
      db,
      sql`SELECT 1 FROM ${raw(step.table)} WHERE project_id = ${projectId} AND ${raw(step.where)} LIMIT 1`,
    );
    const done = found.length > 0;
    steps.push({ id: step.id, title: step.title, done });
  }
  return { steps, completed: steps.every((s) => s.done) };
}

/** Resumes the campaigns sending health paused; answers the security state after. */
export async function resumePausedCampaigns(deps: AppDeps, project: ProjectRef) {
  await resumeCampaigns(deps.db.pool, project.id);
  return securityState(deps, project);
}
