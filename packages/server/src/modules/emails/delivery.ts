import pg from 'pg';
import { keyringOf } from '../../db/at-rest.js';
import { queryRows, sql } from '../../db/query.js';
import type { AppDeps } from '../../deps.js';
import { classifyDeliveryError, type DeliveryError } from '../../mail/delivery-failure.js';
import { refusedRecipients } from '../../mail/transport.js';
import { markTransportDown, markTransportUp } from '../../mail/transport-status.js';
import { recordDeliveryOutcome } from '../../metrics/delivery.js';
import { deliveryReclaimed } from '../../metrics/registry.js';
import { recordDeliveryFeedback } from '../deliverability/feedback.js';
import { feedbackIdFor, returnPathFor } from '../deliverability/verp.js';
import { dkimKeyObject } from '../domains/dkim.js';
import { TransportBreaker } from './breaker.js';
import type { DeferredBatch, DeliveryComposers } from './composers.js';
import { tellOwnersOfOutage, tellOwnersOfRecovery } from './outage-notice.js';
import { NOTIFY_CHANNEL } from './queue.js';

interface EmailRow {
  id: string;
  project_id: string;
  from_email: string;
  from_name: string | null;
  reply_to: string | null;
  to_email: string;
  to_name: string | null;
  cc: Array<{ email: string; name: string | null }> | null;
  bcc: Array<{ email: string; name: string | null }> | null;
  subject: string;
  html: string;
  text: string;
  headers: Record<string, string>;
  attachments: Array<{ filename: string; content: string; contentType?: string }>;
  message_id: string;
  attempts: number;
  created_at: Date;
  /** Set when a FAILED message was queued again: its lifetime counts from then. */
  requeued_at: Date | null;
  campaign_id: string | null;
  contact_id: string | null;
  tracked: boolean;
  template_id: string | null;
  source: string;
  /** The suppression reason when the address was suppressed after the email was queued. */
  suppressed: string | null;
  /** The sender domain's DKIM key, read with the claim (null: no such domain, the mail goes unsigned). */
  dkim_selector: string | null;
  dkim_private_key: string | null;
}

const BATCH = 10;
const IDLE_POLL_MS = 1000;
/** How often a process looks for claims of dead workers (on top of the claim timeout). */
const RECLAIM_EVERY_MS = 1000;

/** The claim, with each email's DKIM key (the domain row as it is now), in one statement. */
const CLAIM_SQL = `
  WITH claimed AS (
    UPDATE emails SET status = 'SENDING', claimed_at = now(), attempts = attempts + 1, updated_at = now()
    WHERE id IN (
      SELECT id FROM emails WHERE status = 'QUEUED' AND next_attempt_at <= now()
      ORDER BY priority, next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED
    ) RETURNING *
  )
  SELECT e.*, d.dkim_selector, d.dkim_private_key, s.reason AS suppressed
  FROM claimed e LEFT JOIN domains d ON d.project_id = e.project_id AND d.domain = split_part(e.from_email, '@', 2)
  LEFT JOIN suppressions s ON s.project_id = e.project_id AND s.email = e.to_email
  ORDER BY e.priority, e.next_attempt_at`;

/**
 * One statement for any number of emails: the state changes and their events on the contacts
 * commit together. `$1` the ids, `$2` the reasons (or nulls), `$3` the outbox files (or nulls),
 * `$4` the provider's message ids (SES; or nulls).
 */
const finishSql = (status: 'SENT', events: string[], set: string) => `
  WITH done AS (
    UPDATE emails e SET status = '${status}', ${set}, claimed_at = NULL, last_error = v.reason, updated_at = now()
    FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) AS v(id, reason, file, provider_id)
    WHERE e.id = v.id AND e.status = 'SENDING' RETURNING e.*
  )
  INSERT INTO events (id, project_id, contact_id, name, data)
  SELECT uuidv7_compat(), project_id, contact_id, n.name,
         jsonb_strip_nulls(jsonb_build_object('emailId', id, 'subject', subject, 'templateId', template_id, 'reason', last_error))
  FROM done CROSS JOIN (VALUES ${events.map((e) => `('${e}')`).join(', ')}) AS n(name) WHERE contact_id IS NOT NULL`;

/**
 * The local outbox or SES: the message was handed to the transport (written as a file, or accepted
 * by the SES API, whose MessageId is kept to match SNS feedback); no receiving server answered yet.
 */
const SENT_SQL = finishSql(
  'SENT',
  ['email.sent'],
  'sent_at = now(), outbox_file = v.file, provider_message_id = v.provider_id',
);
/**
 * SMTP: the relay's final 250 is both the hand-over (`email.sent`) and the receiving server's
 * acceptance (`email.delivery`, `delivered_at`); the status stays SENT (feedback may change it later).
 */
const SENT_AND_DELIVERED_SQL = finishSql(
  'SENT',
  ['email.sent', 'email.delivery'],
  'sent_at = now(), delivered_at = now()',
);

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

/** The message's own recipient first, then its copies, each address once. */
const envelopeRecipients = (email: EmailRow) => [
  ...new Set([email.to_email, ...(email.cc ?? []).map((r) => r.email), ...(email.bcc ?? []).map((r) => r.email)]),
];

export interface Delivery {
  stop(graceMs: number): Promise<void>;
}

/**
 * Records outcomes in groups: the outcomes that arrive in the same turn of the event loop (SMTP
 * replies read together) share one statement, which leaves at the end of that turn. No outcome
 * waits for another statement or a timer, so a message is recorded within one round trip of its
 * reply, as when each had its own statement: the window a crash can turn into a duplicate (accepted,
 * not yet recorded) stays that short, while a busy worker writes fewer statements.
 */
function groupCommit(pool: pg.Pool, name: string, text: string) {
  type Values = [string, string | null, string | null, string | null];
  let waiting: Array<{ values: Values; done: (err?: unknown) => void }> = [];
  const flush = async () => {
    const batch = waiting;
    waiting = [];
    const column = (i: 0 | 1 | 2 | 3) => batch.map((w) => w.values[i]);
    try {
      await pool.query({ name, text, values: [column(0), column(1), column(2), column(3)] });
      for (const w of batch) w.done();
    } catch (err) {
      for (const w of batch) w.done(err);
    }
  };
  return (id: string, reason: string | null, file: string | null, providerId: string | null = null) =>
    new Promise<void>((resolve, reject) => {
      if (waiting.length === 0) setImmediate(() => void flush());
      waiting.push({ values: [id, reason, file, providerId], done: (err) => (err ? reject(err) : resolve()) });
    });
}

/**
 * The delivery workers: claim queued emails in batches (FOR UPDATE SKIP LOCKED, transactional
 * first, with their DKIM keys), read what the batch's composition needs in one query per source
 * (campaign mail: its contacts), then per message compose, DKIM-sign, hand it to the transport and
 * record the outcome (grouped per event-loop turn). A claim whose worker died times out and is retried; SMTP only
 * accepts a message on its final reply, so a worker killed before that reply leaves nothing delivered.
 */
export async function startDelivery(deps: AppDeps, composers: DeliveryComposers): Promise<Delivery> {
  const pool = deps.db.pool;
  const keyring = keyringOf(deps.config);
  const logger = deps.logger.child({ component: 'delivery' });
  let running = true;
  /** Every idle loop's wake-up: a NOTIFY wakes them all (one queued email may be a batch's first of many). */
  const wakers = new Set<() => void>();
  const wakeAll = () => {
    for (const wake of [...wakers]) wake();
  };
  const inFlight = new Set<string>();
  const composer = composers.campaign;

  const listener = new pg.Client({ connectionString: deps.db.url });
  listener.on('error', (err) => logger.warn({ err }, 'delivery LISTEN connection error'));
  listener.on('notification', (n) => {
    if (n.channel === composer.channel) {
      if (n.payload) composer.heard(n.payload);
    } else wakeAll();
  });
  await listener.connect();
  await listener.query(`LISTEN ${NOTIFY_CHANNEL}; LISTEN ${composer.channel}`);

  const idle = (ms = IDLE_POLL_MS) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      wakers.add(wake);
    });

  const { lifetimeMs, outageNotifyMs } = deps.config.delivery;
  const transport = deps.mailer.kind;
  const breaker = new TransportBreaker(deps.config.delivery, {
    opened(error, nextProbeAt) {
      logger.warn({ transport, err: error, nextProbeAt }, 'mail transport down: delivery paused, no attempt charged');
      void markTransportDown(pool, transport, error, nextProbeAt).catch((err) =>
        logger.error({ err }, 'transport status not recorded'),
      );
    },
    reopened(error, nextProbeAt) {
      logger.warn({ transport, err: error, nextProbeAt }, 'mail transport still down: probe failed');
      void markTransportDown(pool, transport, error, nextProbeAt)
        .then(() => tellOwnersOfOutage(deps, transport, outageNotifyMs))
        .catch((err) => logger.error({ err }, 'transport status not recorded'));
    },
    closed() {
      logger.info({ transport }, 'mail transport up: delivery resumed');
      wakeAll();
      void markTransportUp(pool, transport)
        .then((outage) => tellOwnersOfRecovery(deps, transport, outage, outageNotifyMs))
        .catch((err) => logger.error({ err }, 'transport status not recorded'));
    },
  });
  /** The end of an email row's lifetime, as SQL on the `emails` row being updated. */
  const lifetimeEnd = sql`COALESCE(requeued_at, created_at) + make_interval(secs => ${lifetimeMs / 1000})`;
  const expired = (email: EmailRow) =>
    Date.now() >= new Date(email.requeued_at ?? email.created_at).getTime() + lifetimeMs;

  const recordSent =
    deps.mailer.kind === 'smtp'
      ? groupCommit(pool, 'emails.sent-delivered', SENT_AND_DELIVERED_SQL)
      : groupCommit(pool, 'emails.sent', SENT_SQL);
  const returnPath = (emailId: string) =>
    returnPathFor(emailId, deps.config.secrets.linkSigning, deps.config.deliverability.bounceDomain);

  /** What the composition of a claimed batch needs, read once for the batch (one query per source). */
  type Batch = { campaigns: DeferredBatch };
  const prepare = async (rows: EmailRow[]): Promise<Batch> => ({
    campaigns: await composer.load(rows.flatMap((r) => (r.campaign_id ? [{ ...r, campaign_id: r.campaign_id }] : []))),
  });

  /** Campaign mail is composed here, per contact; other mail was composed when it was accepted. */
  async function messageOf(email: EmailRow, batch: Batch) {
    if (email.campaign_id) return batch.campaigns.compose({ ...email, campaign_id: email.campaign_id });
    return email;
  }

  /** One message; `handedOver` is called once the transport has answered (or it never got there). */
  async function deliver(email: EmailRow, batch: Batch, handedOver: () => void, probe = false): Promise<void> {
    inFlight.add(email.id);
    try {
      // Suppressed after it was queued (a hard bounce or complaint since): not sent, and said why.
      if (email.suppressed) {
        await pool.query(
          `UPDATE emails SET status = 'CANCELLED', claimed_at = NULL, last_error = $2, updated_at = now()
           WHERE id = $1 AND status = 'SENDING'`,
          [email.id, `suppressed: ${email.suppressed}`],
        );
        recordDeliveryOutcome('suppressed');
        return;
      }
      if (expired(email)) {
        await failExpired([email.id]);
        return;
      }
      const message = await messageOf(email, batch);
      if (!message) {
        await pool.query(
          `UPDATE emails SET status = 'CANCELLED', claimed_at = NULL, updated_at = now() WHERE id = $1 AND status = 'SENDING'`,
          [email.id],
        );
        recordDeliveryOutcome('cancelled');
        return;
      }
      const domain = email.from_email.split('@')[1] ?? '';
      const handedAt = performance.now();
      const sent = await deps.mailer
        .send({
          messageId: email.message_id,
          from: { name: email.from_name ?? '', address: email.from_email },
          to: { name: email.to_name ?? '', address: email.to_email },
          cc: email.cc?.map((r) => ({ name: r.name ?? '', address: r.email })),
          // VERP: asynchronous bounces come back to an address that names this email. Bcc: envelope only.
          envelope: { from: returnPath(email.id), to: envelopeRecipients(email) },
          replyTo: email.reply_to ?? undefined,
          subject: message.subject,
          html: message.html,
          text: message.text,
          headers: { ...message.headers, 'Feedback-ID': feedbackIdFor(email) },
          attachments: email.attachments.map((a) => ({
            filename: a.filename,
            content: a.content,
            encoding: 'base64',
            contentType: a.contentType,
          })),
          dkim:
            email.dkim_selector && email.dkim_private_key
              ? {
                  domainName: domain,
                  keySelector: email.dkim_selector,
                  privateKey: dkimKeyObject(email.dkim_private_key, keyring) as never,
                  headerFieldNames: DKIM_SIGNED_HEADERS,
                }
              : undefined,
        })
        .then(
          (info) => {
            breaker.transportAnswered();
            return info;
          },
          (err: DeliveryError) => {
            // Before the loop goes on to the next message, so that one is not tried on a dead transport.
            if (classifyDeliveryError(err) === 'transport') breaker.transportFailed(err.message, probe);
            else if (err.responseCode) breaker.transportAnswered();
            throw err;
          },
        )
        .finally(handedOver);
      // Copies refused at RCPT leave the message SENT to its recipient, naming them in last_error; its
      // own recipient refused for good is its bounce (ARCHITECTURE.md, "Refused copies").
      const ownRefusal = sent.refused?.find((e) => e.recipient?.toLowerCase() === email.to_email.toLowerCase());
      if (ownRefusal && classifyDeliveryError(ownRefusal) === 'bounce') throw ownRefusal;
      await recordSent(email.id, refusedRecipients(sent), sent.file ?? null, sent.providerMessageId ?? null);
      recordDeliveryOutcome('sent', {
        transport: deps.mailer.kind,
        transportSeconds: (performance.now() - handedAt) / 1000,
      });
    } catch (err) {
      await recordFailure(email, err as DeliveryError);
    } finally {
      handedOver();
      inFlight.delete(email.id);
    }
  }

  /**
   * The transport's failure: the message goes back to the queue as it was (no attempt used) and the
   * breaker pauses the transport. A 5xx reply about the message is a hard bounce, recorded like any
   * other feedback (event, suppression of the address, health check). Anything else is the message's
   * temporary failure: tried again after `retryBaseMs` doubled per attempt (at most `retryMaxMs`),
   * never later than the end of its lifetime, and FAILED once that has passed.
   */
  async function recordFailure(email: EmailRow, err: DeliveryError) {
    const reason = err.message.slice(0, 500);
    const kind = classifyDeliveryError(err);
    if (kind === 'transport') {
      await requeueUncharged([email.id], reason);
      recordDeliveryOutcome('deferred', { error: reason });
      return;
    }
    if (kind === 'bounce') {
      await recordDeliveryFeedback(deps, email.id, {
        kind: 'bounce',
        bounceType: 'hard',
        diagnostic: reason,
        source: 'smtp',
      });
      recordDeliveryOutcome('bounced', { error: reason });
      return;
    }
    const { retryBaseMs, retryMaxMs } = deps.config.delivery;
    const delaySeconds = Math.min(retryMaxMs, 2 ** Math.min(email.attempts - 1, 30) * retryBaseMs) / 1000;
    const [row] = await queryRows<{ status: string }>(
      pool,
      sql`UPDATE emails SET claimed_at = NULL, last_error = ${reason}, updated_at = now(),
            status = CASE WHEN now() >= ${lifetimeEnd} THEN 'FAILED' ELSE 'QUEUED' END,
            next_attempt_at = LEAST(now() + make_interval(secs => ${delaySeconds}), ${lifetimeEnd})
          WHERE id = ${email.id}::uuid AND status = 'SENDING' RETURNING status`,
    );
    const final = row?.status === 'FAILED';
    recordDeliveryOutcome(final ? 'failed' : 'deferred', { error: reason });
    logger.warn({ emailId: email.id, attempt: email.attempts, final, err: reason }, 'delivery attempt failed');
  }

  /** Claimed mail given back untried or failed by the transport: as it was before the claim. */
  async function requeueUncharged(ids: string[], reason: string | null) {
    await queryRows(
      pool,
      sql`UPDATE emails SET status = 'QUEUED', claimed_at = NULL, attempts = attempts - 1,
            last_error = COALESCE(${reason}, last_error), updated_at = now()
          WHERE id = ANY(${ids}::uuid[]) AND status = 'SENDING'`,
    );
  }

  /** FAILED for good, saying why (and what the last try met). */
  const expire = sql`status = 'FAILED', claimed_at = NULL, updated_at = now(),
    last_error = left('expired: not delivered within its lifetime' || COALESCE('; last error: ' || last_error, ''), 500)`;

  async function failExpired(ids: string[]) {
    await queryRows(pool, sql`UPDATE emails SET ${expire} WHERE id = ANY(${ids}::uuid[]) AND status = 'SENDING'`);
  }

  /** While the transport is down nothing is claimed: queued mail past its lifetime fails here. */
  async function failExpiredQueued() {
    await queryRows(
      pool,
      sql`UPDATE emails SET ${expire} WHERE status = 'QUEUED' AND next_attempt_at <= now() AND ${lifetimeEnd} <= now()`,
    );
  }

  let lastReclaim = 0;
  /** Ids this process has claimed and not settled yet. */
  const held = new Set<string>();
  async function loop(): Promise<void> {
    while (running) {
      let probe = false;
      let claimed: string[] = [];
      try {
        // A claim older than the timeout belongs to a worker that died: back to the queue, with no
        // attempt used (nothing answered about the message; its lifetime still bounds it). Never
        // this process's own claims: a slow batch here is not a dead worker.
        if (Date.now() - lastReclaim >= RECLAIM_EVERY_MS) {
          lastReclaim = Date.now();
          const reclaimed = await queryRows(
            pool,
            sql`UPDATE emails SET status = 'QUEUED', claimed_at = NULL, attempts = greatest(attempts - 1, 0)
                WHERE status = 'SENDING' AND NOT (id = ANY(${[...held]}::uuid[]))
                  AND claimed_at < now() - make_interval(secs => ${deps.config.delivery.claimTimeoutSeconds})
                RETURNING id`,
          );
          if (reclaimed.length) deliveryReclaimed.inc(reclaimed.length);
        }
        const admission = breaker.admit();
        if (admission === 'wait') {
          await idle(Math.max(10, Math.min(IDLE_POLL_MS, breaker.msUntilProbe())));
          continue;
        }
        probe = admission === 'probe';
        if (probe) await failExpiredQueued();
        const { rows } = await pool.query<EmailRow>({
          name: 'emails.claim',
          text: CLAIM_SQL,
          values: [probe ? 1 : BATCH],
        });
        if (rows.length === 0) {
          await idle();
          continue;
        }
        claimed = rows.map((r) => r.id);
        for (const id of claimed) held.add(id);
        let batch: Batch;
        try {
          batch = await prepare(rows);
        } catch (err) {
          for (const email of rows) await recordFailure(email, err as Error);
          continue;
        }
        // The next message goes as soon as the transport has answered this one; the outcomes are
        // written meanwhile (group commit) and awaited before the next claim.
        const outcomes: Array<Promise<void>> = [];
        const started = new Set<string>();
        for (const email of rows) {
          // Stopping, or the transport went down meanwhile: the rest goes back untried.
          if (!running || (breaker.isOpen && !probe)) break;
          started.add(email.id);
          await new Promise<void>((handedOver) =>
            outcomes.push(
              deliver(email, batch, handedOver, probe).catch((err) =>
                logger.error({ err }, 'delivery outcome not recorded'),
              ),
            ),
          );
        }
        await Promise.all(outcomes);
        const left = rows.filter((r) => !started.has(r.id)).map((r) => r.id);
        if (left.length) await requeueUncharged(left, null);
      } catch (err) {
        logger.error({ err }, 'delivery loop error');
        await new Promise((r) => setTimeout(r, 1000));
      } finally {
        for (const id of claimed) held.delete(id);
        // A probe that found nothing or was not sent (suppressed, cancelled, expired) tested nothing.
        if (probe) breaker.probeSkipped();
      }
    }
  }

  const loops = Array.from({ length: deps.config.delivery.concurrency }, () => loop());
  logger.info({ workers: loops.length }, 'delivery started');
  return {
    async stop(graceMs) {
      running = false;
      wakeAll();
      await Promise.race([Promise.all(loops), new Promise((r) => setTimeout(r, graceMs))]);
      await listener.end().catch(() => {});
    },
  };
}
