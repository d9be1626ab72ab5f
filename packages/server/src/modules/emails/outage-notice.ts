import { queryRows, sql } from '../../db/query.js';
import type { AppDeps } from '../../deps.js';
import { sendSystemMail } from '../../mail/system-mail.js';
import { claimOutageNotice, releaseOutageNotice } from '../../mail/transport-status.js';

/**
 * Once the transport has been down `afterMs`, the owners of every project with mail waiting are
 * told, once per outage (claimed in `transport_status`, so one process sends it). Pigeon's own mail
 * goes through the same transport: while it is down the notice fails and is tried again at the next
 * probe, so it may only arrive when the relay is back; the log and `/health` show the outage meanwhile.
 */
export async function tellOwnersOfOutage(deps: AppDeps, transport: string, afterMs: number): Promise<void> {
  const pool = deps.db.pool;
  const since = await claimOutageNotice(pool, transport, afterMs);
  if (!since) return;
  try {
    await tellOwners(deps, 'is waiting: the mail relay is down', [
      `Pigeon cannot reach its mail transport (${transport}) since ${since.toISOString()}.`,
      'No message loses a try while the relay is down: queued mail waits and goes out when it is back, within each message’s lifetime.',
      ...failoverLine(deps),
    ]);
  } catch (err) {
    await releaseOutageNotice(pool, transport);
    deps.logger.warn({ err, transport }, 'outage notice not sent yet (the transport is down); tried at the next probe');
  }
}

/** The relay came back before the notice could go out (it goes through the relay): said now, once. */
export async function tellOwnersOfRecovery(
  deps: AppDeps,
  transport: string,
  outage: { downSince: Date; ownersNotified: boolean } | undefined,
  afterMs: number,
): Promise<void> {
  if (!outage || outage.ownersNotified || deps.clock.nowMs() - outage.downSince.getTime() < afterMs) return;
  await tellOwners(deps, 'was held: the mail relay was down', [
    `Pigeon could not reach its mail transport (${transport}) from ${outage.downSince.toISOString()} until ${deps.clock.now().toISOString()}.`,
    'No message lost a try: the mail that waited is going out now.',
  ]);
}

/** With several relays, mail whose route names another relay that works goes through it meanwhile. */
const failoverLine = (deps: AppDeps) =>
  deps.relays.list.length > 1
    ? ['Mail whose route names another relay goes through the next one of its route meanwhile.']
    : [];

/** The owners of every project with mail waiting (or, after an outage, just released). */
async function tellOwners(deps: AppDeps, subject: string, lines: string[]) {
  const owners = await queryRows<{ email: string; name: string }>(
    deps.db.pool,
    sql`SELECT DISTINCT u.email, p.name FROM projects p
        JOIN memberships m ON m.project_id = p.id AND m.role = 'OWNER' JOIN users u ON u.id = m.user_id
        WHERE EXISTS (SELECT 1 FROM emails e WHERE e.project_id = p.id AND e.status IN ('QUEUED', 'SENDING'))`,
  );
  for (const owner of owners) {
    await sendSystemMail(deps, owner.email, `Mail of ${owner.name} ${subject}`, [
      ...lines,
      `${deps.config.http.publicUrl}/health`,
    ]);
  }
}
