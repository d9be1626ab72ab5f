import pg from 'pg';
import { keyringOf } from '../../db/at-rest.js';
import type { AppDeps } from '../../deps.js';
import { CampaignComposer } from '../campaigns/delivery-content.js';
import { dkimKeyObject } from '../domains/dkim.js';
import { NOTIFY_CHANNEL } from './queue.js';

interface EmailRow {
  id: string;
  project_id: string;
  from_email: string;
  from_name: string | null;
  reply_to: string | null;
  to_email: string;
  to_name: string | null;
  subject: string;
  html: string;
  text: string;
  headers: Record<string, string>;
  attachments: Array<{ filename: string; content: string; contentType?: string }>;
  message_id: string;
  attempts: number;
  campaign_id: string | null;
  contact_id: string | null;
  tracked: boolean;
}

const BATCH = 10;
const MAX_ATTEMPTS = 8;
const IDLE_POLL_MS = 1000;

const CLAIM_SQL = `
  UPDATE emails SET status = 'SENDING', claimed_at = now(), attempts = attempts + 1, updated_at = now()
  WHERE id IN (
    SELECT id FROM emails WHERE status = 'QUEUED' AND next_attempt_at <= now()
    ORDER BY priority, next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED
  ) RETURNING *`;

/** One statement: the state change and its event on the contact commit together. */
const finishSql = (status: 'SENT' | 'BOUNCED', event: string, set: string) => `
  WITH done AS (
    UPDATE emails SET status = '${status}', ${set}, claimed_at = NULL, last_error = $2, updated_at = now()
    WHERE id = $1 AND status = 'SENDING' RETURNING *
  )
  INSERT INTO events (id, project_id, contact_id, name, data)
  SELECT uuidv7_compat(), project_id, contact_id, '${event}',
         jsonb_strip_nulls(jsonb_build_object('emailId', id, 'subject', subject, 'templateId', template_id, 'reason', $2::text))
  FROM done WHERE contact_id IS NOT NULL`;

const SENT_SQL = finishSql('SENT', 'email.sent', 'sent_at = now(), outbox_file = $3');
const BOUNCED_SQL = finishSql('BOUNCED', 'email.bounce', 'bounced_at = now()');

/** nodemailer's default list plus List-Unsubscribe-Post (RFC 8058 wants it signed) and Feedback-ID. */
const DKIM_SIGNED_HEADERS = [
  'From',
  'Sender',
  'Reply-To',
  'Subject',
  'Date',
  'Message-ID',
  'To',
  'Cc',
  'MIME-Version',
  'Content-Type',
  'Content-Transfer-Encoding',
  'In-Reply-To',
  'References',
  'List-Id',
  'List-Help',
  'List-Unsubscribe',
  'List-Unsubscribe-Post',
  'List-Subscribe',
  'List-Post',
  'List-Owner',
  'List-Archive',
  'Feedback-ID',
].join(':');

export interface Delivery {
  stop(graceMs: number): Promise<void>;
}

/**
 * The delivery workers: claim queued emails in batches (FOR UPDATE SKIP LOCKED, transactional
 * first), DKIM-sign and hand each to the transport, and record the outcome per message. A claim
 * whose worker died times out and is retried; SMTP only accepts a message on its final reply, so
 * a worker killed before that reply leaves nothing delivered.
 */
export async function startDelivery(deps: AppDeps): Promise<Delivery> {
  const pool = deps.db.pool;
  const keyring = keyringOf(deps.config);
  const logger = deps.logger.child({ component: 'delivery' });
  let running = true;
  let wake: (() => void) | undefined;
  const inFlight = new Set<string>();

  const listener = new pg.Client({ connectionString: deps.db.url });
  listener.on('error', (err) => logger.warn({ err }, 'delivery LISTEN connection error'));
  listener.on('notification', () => wake?.());
  await listener.connect();
  await listener.query(`LISTEN ${NOTIFY_CHANNEL}`);

  const idle = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, IDLE_POLL_MS);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const composer = new CampaignComposer(pool, deps.config);

  /** Campaign mail is composed here, per contact; other mail was composed when it was accepted. */
  async function messageOf(email: EmailRow) {
    if (!email.campaign_id) return email;
    return composer.compose({ ...email, campaign_id: email.campaign_id });
  }

  async function deliver(email: EmailRow): Promise<void> {
    inFlight.add(email.id);
    try {
      const message = await messageOf(email);
      if (!message) {
        await pool.query(
          `UPDATE emails SET status = 'CANCELLED', claimed_at = NULL, updated_at = now() WHERE id = $1 AND status = 'SENDING'`,
          [email.id],
        );
        return;
      }
      const domain = email.from_email.split('@')[1] ?? '';
      const { rows } = await pool.query<{ dkim_selector: string; dkim_private_key: string }>(
        'SELECT dkim_selector, dkim_private_key FROM domains WHERE project_id = $1 AND domain = $2',
        [email.project_id, domain],
      );
      const key = rows[0];
      const sent = await deps.mailer.send({
        messageId: email.message_id,
        from: { name: email.from_name ?? '', address: email.from_email },
        to: { name: email.to_name ?? '', address: email.to_email },
        replyTo: email.reply_to ?? undefined,
        subject: message.subject,
        html: message.html,
        text: message.text,
        headers: message.headers,
        attachments: email.attachments.map((a) => ({
          filename: a.filename,
          content: a.content,
          encoding: 'base64',
          contentType: a.contentType,
        })),
        dkim: key
          ? {
              domainName: domain,
              keySelector: key.dkim_selector,
              privateKey: dkimKeyObject(key.dkim_private_key, keyring) as never,
              headerFieldNames: DKIM_SIGNED_HEADERS,
            }
          : undefined,
      });
      await pool.query({ name: 'emails.sent', text: SENT_SQL, values: [email.id, null, sent.file ?? null] });
    } catch (err) {
      await recordFailure(email, err as Error & { responseCode?: number; code?: string });
    } finally {
      inFlight.delete(email.id);
    }
  }

  /** 5xx SMTP replies are permanent (bounce); everything else is retried with backoff. */
  async function recordFailure(email: EmailRow, err: Error & { responseCode?: number }) {
    const reason = err.message.slice(0, 500);
    if (err.responseCode && err.responseCode >= 500) {
      await pool.query({ name: 'emails.bounced', text: BOUNCED_SQL, values: [email.id, reason] });
      return;
    }
    const final = email.attempts >= MAX_ATTEMPTS;
    const delaySeconds = Math.min(3600, (2 ** (email.attempts - 1) * deps.config.delivery.retryBaseMs) / 1000);
    await pool.query(
      `UPDATE emails SET status = $2, claimed_at = NULL, last_error = $3, updated_at = now(),
         next_attempt_at = now() + make_interval(secs => $4)
       WHERE id = $1 AND status = 'SENDING'`,
      [email.id, final ? 'FAILED' : 'QUEUED', reason, delaySeconds],
    );
    logger.warn({ emailId: email.id, attempt: email.attempts, final, err: reason }, 'delivery attempt failed');
  }

  async function loop(): Promise<void> {
    while (running) {
      try {
        // A claim older than the timeout belongs to a worker that died: back to the queue.
        await pool.query(
          `UPDATE emails SET status = 'QUEUED', claimed_at = NULL WHERE status = 'SENDING'
           AND claimed_at < now() - make_interval(secs => $1)`,
          [deps.config.delivery.claimTimeoutSeconds],
        );
        const { rows } = await pool.query<EmailRow>({ name: 'emails.claim', text: CLAIM_SQL, values: [BATCH] });
        if (rows.length === 0) {
          await idle();
          continue;
        }
        for (const email of rows) {
          if (!running) break;
          await deliver(email);
        }
        // Claimed but not started because we are stopping: back to the queue at once.
        const left = rows.filter((r) => !inFlight.has(r.id)).map((r) => r.id);
        if (!running && left.length) {
          await pool.query(
            "UPDATE emails SET status = 'QUEUED', claimed_at = NULL, attempts = attempts - 1 WHERE id = ANY($1) AND status = 'SENDING'",
            [left],
          );
        }
      } catch (err) {
        logger.error({ err }, 'delivery loop error');
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  const loops = Array.from({ length: deps.config.delivery.concurrency }, () => loop());
  logger.info({ workers: loops.length }, 'delivery started');
  return {
    async stop(graceMs) {
      running = false;
      wake?.();
      await Promise.race([Promise.all(loops), new Promise((r) => setTimeout(r, graceMs))]);
      await listener.end().catch(() => {});
    },
  };
}
