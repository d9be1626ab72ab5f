import type pg from 'pg';
import { uuidv7 } from 'uuidv7';
import { queryRows, sql } from '../../db/query.js';
import { inTransaction, type Queryable, withQueryLimits } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import type { ListenHub } from '../../jobs/listen-hub.js';
import { type RunningLoop, startLoop } from '../../jobs/loop.js';
import { AppError, badRequest, conflict, forbidden } from '../../kit/errors.js';
import { refundEmails, requireAllowance } from '../billing/public.js';
import { composeMessage } from '../composition/public.js';
import type { ContactRow } from '../contacts/public.js';
import { requireVerifiedSender } from '../domains/public.js';
import {
  analyzeQueuePartitions,
  BULK_QUEUED,
  cancelCampaignEmails,
  insertCampaignEmails,
  NOTIFY_CHANNEL,
  PRIORITY,
  queueEmail,
  requeueFailedEmails,
} from '../email-states/public.js';
import { shouldTrack } from '../engagement/public.js';
import { recipientsSql } from './audience.js';
import { CAMPAIGN_CANCELLED_CHANNEL } from './delivery-content.js';
import { type CampaignRow, findCampaign } from './service.js';

/** Campaign mail waits behind transactional (0) and workflow (1) mail in the delivery queue. */
export const CAMPAIGN_PRIORITY = PRIORITY.campaign;

/** `scheduledFor` as the spec allows it: anything a JavaScript Date parses; null or omitted is now. */
function parseSchedule(value: string | number | null | undefined): Date | null {
  if (value === undefined || value === null) return null;
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw badRequest(`scheduledFor: "${value}" is not a date`);
  return at;
}

/**
 * POST /campaigns/:id/send. A future `scheduledFor` makes it SCHEDULED (the dispatcher starts it
 * when due, from the row itself, so a restart neither loses nor doubles it); otherwise it starts now.
 */
export async function sendCampaign(
  deps: AppDeps,
  projectId: string,
  id: string,
  scheduledFor: string | number | null | undefined,
) {
  const campaign = await findCampaign(deps.db.pool, projectId, id);
  if (campaign.status !== 'DRAFT' && campaign.status !== 'SCHEDULED') {
    throw conflict(`The campaign is ${campaign.status}; only DRAFT or SCHEDULED campaigns can be sent`);
  }
  await requireVerifiedSender(deps.db.pool, projectId, campaign.from_email);
  const at = parseSchedule(scheduledFor);
  const later = at !== null && at.getTime() > deps.clock.nowMs();
  if (!later) await refuseIfCampaignsPaused(deps.db.pool, projectId);
  if (at && later) {
    const [row] = await queryRows<CampaignRow>(
      deps.db.pool,
      sql`WITH scheduled AS (
            UPDATE campaigns SET status = 'SCHEDULED', scheduled_for = ${at}, updated_at = now()
            WHERE id = ${id}::uuid AND status IN ('DRAFT', 'SCHEDULED') RETURNING *
          ), notified AS (SELECT pg_notify(${CAMPAIGN_SCHEDULED_CHANNEL}, '') FROM scheduled)
          SELECT scheduled.* FROM scheduled, (SELECT count(*) FROM notified) n`,
    );
    if (!row) throw conflict('The campaign started sending meanwhile');
    return { row, message: `Campaign scheduled for ${at.toISOString()}` };
  }
  const row = await startCampaign(deps, id);
  if (!row) throw conflict('The campaign started sending meanwhile');
  return { row, message: `Campaign is sending to ${row.total_recipients} recipients` };
}

/** 403 CAMPAIGNS_PAUSED while the project's deliverability pause holds (scheduling still works: it waits). */
async function refuseIfCampaignsPaused(db: Queryable, projectId: string) {
  const [row] = await queryRows<{ campaigns_paused_reason: string | null; campaigns_paused_at: Date | null }>(
    db,
    sql`SELECT paused_at AS campaigns_paused_at, reason AS campaigns_paused_reason
        FROM campaign_pauses WHERE project_id = ${projectId}::uuid`,
  );
  if (row?.campaigns_paused_at) {
    throw forbidden(`Campaign sending is paused for this project: ${row.campaigns_paused_reason}`, 'CAMPAIGNS_PAUSED', {
      details: { pausedAt: new Date(row.campaigns_paused_at).toISOString() },
      suggestion:
        'Check GET /projects/:id/security, clean the list, then resume with POST /projects/:id/security/resume-campaigns',
    });
  }
}

/**
 * Freezes the audience and queues one email per recipient, in one transaction: the campaign moves
 * to SENDING (SENT at once when nobody is in the audience) only together with its recipients,
 * and (campaign, contact) is unique, so a crash mid-way redoes the whole freeze and no contact ever
 * gets a campaign twice. MARKETING and HEADLESS campaigns skip unsubscribed contacts. With a
 * project send rate, recipients are spread over time through their first delivery time.
 * The whole audience is counted against the monthly campaigns cap in the same transaction: a
 * campaign that would pass it is refused (403 BILLING_LIMIT_EXCEEDED) before any mail is queued,
 * never cut off half-way. Returns undefined when the campaign is no longer DRAFT or SCHEDULED.
 */
export async function startCampaign(deps: AppDeps, id: string): Promise<CampaignRow | undefined> {
  const row = await freezeAudience(deps, id);
  if (row && row.total_recipients >= BULK_QUEUED) {
    // Not awaited: the send call does not wait for it (~0.5 s at 100,000 recipients, measured).
    void analyzeQueuePartitions(deps.db.pool).catch((err) =>
      deps.logger.warn({ err, campaignId: id }, 'statistics of the queued mail not refreshed; autovacuum will'),
    );
  }
  return row;
}

/** `startCampaign`'s transaction: the audience frozen into queued mail, the campaign SENDING. */
function freezeAudience(deps: AppDeps, id: string): Promise<CampaignRow | undefined> {
  return withQueryLimits(
    deps.db.pool,
    { timeoutMs: deps.config.segments.queryTimeoutMs, workMemMb: deps.config.segments.workMemMb },
    async (client) => {
      const [campaign] = await queryRows<CampaignRow & { send_rate: number | null }>(
        client,
        sql`SELECT k.*, p.campaign_send_rate AS send_rate FROM campaigns k JOIN projects p ON p.id = k.project_id
          WHERE k.id = ${id}::uuid AND k.status IN ('DRAFT', 'SCHEDULED')
          FOR UPDATE OF k SKIP LOCKED FOR SHARE OF p`,
      );
      if (!campaign) return undefined;
      // Read after the project row's lock (a new statement sees a pause committed while it waited);
      // a pause taken now waits for this dispatch and then holds the mail it queues.
      const [pause] = await queryRows(
        client,
        sql`SELECT 1 FROM campaign_pauses WHERE project_id = ${campaign.project_id}::uuid`,
      );
      if (pause) return undefined;
      const sender = await requireVerifiedSender(client, campaign.project_id, campaign.from_email);
      const audience = {
        type: campaign.audience_type,
        segmentId: campaign.segment_id,
        condition: campaign.audience_condition,
      };
      const recipients = await recipientsSql(client, campaign.project_id, audience, {
        type: campaign.type,
        topicId: campaign.topic_id,
      });
      const spread = campaign.send_rate
        ? sql`now() + make_interval(secs => (row_number() OVER (ORDER BY c.id) - 1) / ${campaign.send_rate}::float8)`
        : sql`now()`;
      const [frozen] = await queryRows<{ n: number }>(
        client,
        sql`WITH audience AS (
            SELECT uuidv7_compat() AS email_id, c.id, c.email, ${spread} AS due
            FROM contacts c WHERE ${recipients}
          ), queued AS (${insertCampaignEmails(
            {
              projectId: campaign.project_id,
              campaignId: campaign.id,
              templateId: campaign.template_id,
              type: campaign.type,
              from: { email: campaign.from_email, name: campaign.from_name },
              replyTo: campaign.reply_to,
              subject: campaign.subject,
              domain: sender.domain,
              tracked: shouldTrack(sender.trackingMode, campaign.type, undefined),
            },
            'audience',
          )}
          ) SELECT count(*)::int AS n FROM queued`,
      );
      const total = frozen?.n ?? 0;
      // The whole audience is counted before anything is sent: over the cap, the freeze rolls back.
      await requireAllowance(client, campaign.project_id, 'campaigns', total);
      const [row] = await queryRows<CampaignRow>(
        client,
        sql`UPDATE campaigns SET status = CASE WHEN ${total} = 0 THEN 'SENT' ELSE 'SENDING' END,
            total_recipients = ${total}, started_at = now(), sent_at = CASE WHEN ${total} = 0 THEN now() END,
            scheduled_for = COALESCE(scheduled_for, now()), updated_at = now()
          WHERE id = ${id}::uuid RETURNING *`,
      );
      await client.query(`NOTIFY ${NOTIFY_CHANNEL}`);
      return row;
    },
  );
}

/** How long a cancel waits for the messages already claimed by a worker to be handed over or dropped. */
const CANCEL_SETTLE_MS = 10_000;

/**
 * SCHEDULED or SENDING → CANCELLED; every recipient not yet handed to the transport is cancelled with it.
 * Queued mail is cancelled in the transaction; mail a worker claimed before it is dropped by that
 * worker (the notification, or the campaign's status read with its batch) unless it was already being
 * handed over. The answer waits until no claimed message of the campaign is left (bounded), so nothing
 * of the campaign reaches the transport after it, and `sent` is final.
 */
export async function cancelCampaign(pool: pg.Pool, projectId: string, id: string) {
  await findCampaign(pool, projectId, id);
  await inTransaction(pool, async (client) => {
    const [campaign] = await queryRows<CampaignRow>(
      client,
      sql`SELECT * FROM campaigns WHERE id = ${id}::uuid FOR UPDATE`,
    );
    if (campaign?.status !== 'SCHEDULED' && campaign?.status !== 'SENDING') {
      throw conflict(`The campaign is ${campaign?.status}; only SCHEDULED or SENDING campaigns can be cancelled`);
    }
    const count = await cancelCampaignEmails(client, id);
    await queryRows(
      client,
      sql`UPDATE campaigns SET status = 'CANCELLED', cancelled_at = now(), updated_at = now() WHERE id = ${id}::uuid`,
    );
    // Mail that will never be sent no longer counts against the month it was counted in.
    if (campaign.started_at) await refundEmails(client, projectId, 'campaigns', count, campaign.started_at);
    // Delivered on commit: workers stop composing this campaign's mail they claimed before the cancel
    // (each of those is cancelled and refunded by its worker: emails/cancelled.ts).
    await queryRows(client, sql`SELECT pg_notify(${CAMPAIGN_CANCELLED_CHANNEL}, ${id})`);
  });
  const { sent, cancelled, in_flight } = await settledCounts(pool, id);
  const message =
    `Cancelled: ${sent} sent, ${cancelled} never will be` +
    (in_flight ? `; ${in_flight} were still being handed to the transport (see stats for where they ended)` : '');
  return { id, status: 'CANCELLED' as const, sent, cancelled, message };
}

/**
 * The campaign's sent and cancelled counts once no message of it is claimed any more (or the wait
 * ran out): the cancelled ones are those the cancel found queued and those workers dropped, as the
 * campaign's stats count them.
 */
async function settledCounts(pool: pg.Pool, id: string) {
  const deadline = Date.now() + CANCEL_SETTLE_MS;
  for (;;) {
    const [counts = { sent: 0, cancelled: 0, in_flight: 0 }] = await queryRows<{
      sent: number;
      cancelled: number;
      in_flight: number;
    }>(
      pool,
      sql`SELECT count(*) FILTER (WHERE sent_at IS NOT NULL OR status IN ('BOUNCED', 'FAILED'))::int AS sent,
                 count(*) FILTER (WHERE status = 'CANCELLED')::int AS cancelled,
                 count(*) FILTER (WHERE status = 'SENDING')::int AS in_flight
          FROM emails WHERE campaign_id = ${id}::uuid`,
    );
    if (counts.in_flight === 0 || Date.now() >= deadline) return counts;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * POST /campaigns/:id/requeue-failed: the campaign's FAILED messages queued again (refusing what
 * sending refuses); a SENT campaign with messages queued again is SENDING until they are done.
 */
export async function requeueCampaignFailed(pool: pg.Pool, projectId: string, id: string) {
  await findCampaign(pool, projectId, id);
  return inTransaction(pool, async (client) => {
    const [campaign] = await queryRows<CampaignRow>(
      client,
      sql`SELECT * FROM campaigns WHERE id = ${id}::uuid FOR UPDATE`,
    );
    if (campaign?.status !== 'SENDING' && campaign?.status !== 'SENT') {
      throw conflict(`The campaign is ${campaign?.status}; only a SENDING or SENT campaign has mail to requeue`);
    }
    const counts = await requeueFailedEmails(client, projectId, { campaignId: id });
    if (counts.requeued > 0) {
      await queryRows(
        client,
        sql`UPDATE campaigns SET status = 'SENDING', sent_at = NULL, updated_at = now() WHERE id = ${id}::uuid`,
      );
    }
    return counts;
  });
}

/** POST /campaigns/:id/test: the campaign, composed for one address (its contact's data when it exists), sent once. */
export async function testCampaign(deps: AppDeps, projectId: string, id: string, email: string) {
  const campaign = await findCampaign(deps.db.pool, projectId, id);
  const sender = await requireVerifiedSender(deps.db.pool, projectId, campaign.from_email);
  const [found] = await queryRows<ContactRow>(
    deps.db.pool,
    sql`SELECT * FROM contacts WHERE project_id = ${projectId}::uuid AND email = ${email}`,
  );
  const now = deps.clock.now();
  const contact: ContactRow = found ?? {
    id: '00000000-0000-0000-0000-000000000000',
    project_id: projectId,
    email,
    subscribed: true,
    data: {},
    created_at: now,
    updated_at: now,
  };
  const emailId = uuidv7();
  const content = { subject: campaign.subject, html: campaign.body, type: campaign.type };
  await inTransaction(deps.db.pool, async (client) => {
    const message = composeMessage(content, contact, contact.data, emailId, {
      publicUrl: deps.config.http.publicUrl,
      linkSecret: deps.config.secrets.linkSigning,
      tracked: false,
      unsubscribeMailbox: sender.unsubscribeMailbox,
      topicId: campaign.topic_id,
    });
    await queueEmail(client, {
      id: emailId,
      projectId,
      contactId: found?.id ?? null,
      templateId: campaign.template_id,
      type: campaign.type,
      source: 'CAMPAIGN_TEST',
      priority: PRIORITY.transactional,
      from: { email: campaign.from_email, name: campaign.from_name },
      replyTo: campaign.reply_to,
      to: { email, name: null },
      subject: message.subject,
      html: message.html,
      text: message.text,
      headers: message.headers,
      tracked: false,
    });
    // A test email is campaign mail too.
    await requireAllowance(client, projectId, 'campaigns', 1);
  });
  return { emailId, email };
}

/**
 * A due campaign that would pass the monthly cap is not started: it goes back to DRAFT (nothing
 * was queued), so it neither retries every tick nor starts by surprise when the month resets.
 */
async function refusedScheduledCampaign(deps: AppDeps, id: string, err: unknown): Promise<undefined> {
  if (!(err instanceof AppError) || err.code !== 'BILLING_LIMIT_EXCEEDED') throw err;
  await queryRows(
    deps.db.pool,
    sql`UPDATE campaigns SET status = 'DRAFT', scheduled_for = NULL, updated_at = now()
        WHERE id = ${id}::uuid AND status = 'SCHEDULED'`,
  );
  deps.logger.warn({ campaignId: id, details: err.extra.details }, 'scheduled campaign not started: billing limit');
  return undefined;
}

/**
 * SENDING campaigns with no recipient left queued or in delivery become SENT. The look for one
 * such email of each campaign goes backwards through its (campaign_id, status) entries, and meets
 * the mail queued last, which is still waiting (0.1 ms). The `NOT EXISTS` it replaces was planned
 * as a hash anti-join over every QUEUED and SENDING entry: 25–70 ms a tick in the middle of a 100k
 * campaign, 12–16% of PostgreSQL's CPU per delivered message. A forward look would be little
 * better: the delivery loop claims a campaign's mail in the order it was queued, so the first
 * entries are dead versions of rows sent long ago (until a vacuum). `ORDER BY … LIMIT 1` needs a
 * scalar sub-select: inside `EXISTS` PostgreSQL drops the ordering.
 */
async function markFinishedCampaigns(db: Queryable): Promise<void> {
  await queryRows(
    db,
    sql`UPDATE campaigns k SET status = 'SENT', sent_at = now(), updated_at = now()
        WHERE k.status = 'SENDING' AND (
          SELECT 1 FROM emails e WHERE e.campaign_id = k.id AND e.status IN ('QUEUED', 'SENDING')
          ORDER BY e.campaign_id DESC, e.status DESC LIMIT 1) IS NULL`,
  );
}

export type CampaignDispatcher = RunningLoop;

/** NOTIFY on it when a campaign is scheduled: the dispatcher's wait is until the earliest schedule. */
export const CAMPAIGN_SCHEDULED_CHANNEL = 'pigeon_campaign_scheduled';

/** Due campaigns one claim starts; with that many, more may be due and the loop claims again at once. */
const DISPATCH_BATCH = 10;

/**
 * In every worker, one loop (`jobs/loop.ts`): starts SCHEDULED campaigns that are due and marks
 * SENDING campaigns SENT once no recipient is left queued or in delivery. Both are single guarded
 * statements, so several workers never start a campaign twice. It waits until the earliest
 * schedule, at most `dispatchIntervalMs` (the pace of marking campaigns SENT); scheduling a
 * campaign wakes it to look again.
 */
export function startCampaignDispatcher(deps: AppDeps, hub: ListenHub): Promise<CampaignDispatcher> {
  const logger = deps.logger.child({ component: 'campaigns' });
  return startLoop<string[]>(hub, deps.logger, {
    name: 'campaigns',
    channels: [CAMPAIGN_SCHEDULED_CHANNEL],
    claim: async () => {
      const due = await dueCampaigns(deps.db.pool);
      if (due.length > 0) return due;
      await markFinishedCampaigns(deps.db.pool);
      return undefined;
    },
    handle: async (due) => {
      for (const id of due) {
        const started = await startCampaign(deps, id).catch((err) => refusedScheduledCampaign(deps, id, err));
        if (started)
          logger.info({ campaignId: id, recipients: started.total_recipients }, 'scheduled campaign started');
      }
      await markFinishedCampaigns(deps.db.pool);
    },
    again: (due) => due.length === DISPATCH_BATCH,
    idleMs: () => untilNextSchedule(deps),
  });
}

async function dueCampaigns(db: Queryable): Promise<string[]> {
  const rows = await queryRows<{ id: string }>(
    db,
    sql`SELECT k.id FROM campaigns k JOIN projects p ON p.id = k.project_id
        WHERE k.status = 'SCHEDULED' AND k.scheduled_for <= now()
          AND NOT EXISTS (SELECT 1 FROM campaign_pauses cp WHERE cp.project_id = p.id)
        ORDER BY k.scheduled_for LIMIT ${DISPATCH_BATCH}`,
  );
  return rows.map((r) => r.id);
}

/** Until the earliest scheduled campaign is due, at most `dispatchIntervalMs`. */
async function untilNextSchedule(deps: AppDeps): Promise<number> {
  const [row] = await queryRows<{ ms: number | null }>(
    deps.db.pool,
    sql`SELECT (extract(epoch FROM min(scheduled_for) - now()) * 1000)::float8 AS ms FROM campaigns
        WHERE status = 'SCHEDULED'`,
  );
  const ms = row?.ms ?? Number.POSITIVE_INFINITY;
  return Math.max(10, Math.min(deps.config.campaigns.dispatchIntervalMs, ms + 5));
}
