import pg from 'pg';
import { keyringOf } from '../../db/at-rest.js';
import type { AppDeps } from '../../deps.js';
import { createSleepers } from '../../jobs/sleepers.js';
import { classifyDeliveryError, type DeliveryError } from '../../mail/delivery-failure.js';
import { routeNames, streamOf } from '../../mail/relays.js';
import { refusedRecipients } from '../../mail/transport.js';
import { markTransportDown, markTransportUp } from '../../mail/transport-status.js';
import { recordDeliveryOutcome } from '../../metrics/delivery.js';
import { deliveryReclaimed } from '../../metrics/registry.js';
import { recordDeliveryFeedback } from '../deliverability/feedback.js';
import { feedbackIdFor, returnPathFor } from '../deliverability/verp.js';
import { dkimKeyObject } from '../domains/dkim.js';
import { NOTIFY_CHANNEL } from '../email-states/queue.js';
import { queueWindowSource, REQUEUED_PAYLOAD } from '../email-states/queue-window.js';
import {
  type ClaimedEmail,
  claimEmails,
  failExpiredClaimed,
  failExpiredQueued,
  reclaimAbandoned,
  requeueUncharged,
  retryLater,
} from '../email-states/service.js';
import { dropClaimed } from './cancelled.js';
import type { DeferredBatch, DeliveryComposers } from './composers.js';
import { startGovernor } from './governor.js';
import { tellOwnersOfOutage, tellOwnersOfRecovery } from './outage-notice.js';
import { projectRoutesCache } from './project-routes.js';
import { RelayRouter } from './relay-router.js';
import { sentRecorder } from './sent-recorder.js';
import { sharedClaim } from './shared-claim.js';

const IDLE_POLL_MS = 1000;
/** How often a process looks for claims of dead workers (on top of the claim timeout). */
const RECLAIM_EVERY_MS = 1000;

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
const envelopeRecipients = (email: ClaimedEmail) => [
  ...new Set([email.to_email, ...(email.cc ?? []).map((r) => r.email), ...(email.bcc ?? []).map((r) => r.email)]),
];

export interface Delivery {
  stop(graceMs: number): Promise<void>;
}

/**
 * The delivery workers: claim queued emails in batches (one claim statement in flight per process,
 * FOR UPDATE SKIP LOCKED, transactional first, with their DKIM keys), read what the batch's
 * composition needs in one query per source (campaign mail: its contacts), then per message compose,
 * DKIM-sign, hand it to the transport and record the outcome (one record statement in flight per
 * process). A claim whose worker died times out and is retried; SMTP only accepts a message on its
 * final reply, so a worker killed before that reply leaves nothing delivered.
 */
export async function startDelivery(deps: AppDeps, composers: DeliveryComposers): Promise<Delivery> {
  const pool = deps.db.pool;
  const keyring = keyringOf(deps.config);
  const logger = deps.logger.child({ component: 'delivery' });
  let running = true;
  /** Every idle loop's wake-up: a NOTIFY wakes them all (one queued email may be a batch's first of many). */
  const sleepers = createSleepers();
  const wakeAll = sleepers.wakeAll;
  const inFlight = new Set<string>();
  const composer = composers.campaign;

  const listener = new pg.Client({ connectionString: deps.db.url });
  listener.on('error', (err) => logger.warn({ err }, 'delivery LISTEN connection error'));
  const queueWindow = queueWindowSource(pool);
  listener.on('notification', (n) => {
    if (n.channel === composer.channel) {
      if (n.payload) composer.heard(n.payload);
      return;
    }
    if (n.payload === REQUEUED_PAYLOAD) queueWindow.invalidate();
    wakeAll();
  });
  await listener.connect();
  await listener.query(`LISTEN ${NOTIFY_CHANNEL}; LISTEN ${composer.channel}`);

  const idle = (ms = IDLE_POLL_MS) => sleepers.sleep(ms);

  const { lifetimeMs, outageNotifyMs } = deps.config.delivery;
  // One breaker per relay; with a single relay its name is its kind (`smtp`, `ses`, `outbox`), as before.
  const router = new RelayRouter(deps.relays, deps.config.delivery, ({ name: transport }) => ({
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
  }));
  const governor = startGovernor(deps);
  const expired = (email: ClaimedEmail) =>
    Date.now() >= new Date(email.requeued_at ?? email.created_at).getTime() + lifetimeMs;

  // An SMTP relay's final 250 is also the delivery; SES and the outbox only took the message.
  const recordSmtpSent = sentRecorder(pool, true);
  const recordOtherSent = sentRecorder(pool, false);
  const projectRoutes = projectRoutesCache(pool, deps.relays.list.length > 1);
  const relayNames = deps.relays.list.map((r) => r.name);
  /** The relays a message tries, in order: its project's route for its stream, else the installation's. */
  const routeOf = (email: ClaimedEmail) => {
    const stream = streamOf(email.source);
    return routeNames(deps.relays.routes, relayNames, stream, projectRoutes.get(email.project_id)?.[stream] ?? null);
  };
  const claimBatch = sharedClaim(pool, deps.config.delivery.claimBatch, queueWindow);
  const returnPath = (emailId: string) =>
    returnPathFor(emailId, deps.config.secrets.linkSigning, deps.config.deliverability.bounceDomain);

  /** What the composition of a claimed batch needs, read once for the batch (one query per source). */
  type Batch = { campaigns: DeferredBatch };
  const prepare = async (rows: ClaimedEmail[]): Promise<Batch> => {
    await projectRoutes.load(rows.map((r) => r.project_id));
    return {
      campaigns: await composer.load(
        rows.flatMap((r) => (r.campaign_id ? [{ ...r, campaign_id: r.campaign_id }] : [])),
      ),
    };
  };

  /** Campaign mail is composed here, per contact; other mail was composed when it was accepted. */
  async function messageOf(email: ClaimedEmail, batch: Batch) {
    if (email.campaign_id) return batch.campaigns.compose({ ...email, campaign_id: email.campaign_id });
    return email;
  }

  /** One message; `handedOver` is called once the transport has answered (or it never got there). */
  async function deliver(email: ClaimedEmail, batch: Batch, handedOver: () => void): Promise<void> {
    inFlight.add(email.id);
    try {
      // Suppressed after it was queued (a hard bounce or complaint since): not sent, and said why.
      if (email.suppressed) {
        await dropClaimed(pool, email.id, `suppressed: ${email.suppressed}`);
        recordDeliveryOutcome('suppressed');
        return;
      }
      if (expired(email)) {
        await failExpiredClaimed(pool, [email.id]);
        return;
      }
      const message = await messageOf(email, batch);
      if (!message) {
        await dropClaimed(pool, email.id, null);
        recordDeliveryOutcome('cancelled');
        return;
      }
      const domain = email.from_email.split('@')[1] ?? '';
      const dkim =
        email.dkim_selector && email.dkim_private_key
          ? {
              domainName: domain,
              keySelector: email.dkim_selector,
              privateKey: dkimKeyObject(email.dkim_private_key, keyring) as never,
              headerFieldNames: DKIM_SIGNED_HEADERS,
            }
          : undefined;
      // VERP: asynchronous bounces come back to an address that names this email. Bcc: envelope only.
      const envelope = { from: returnPath(email.id), to: envelopeRecipients(email) };
      const feedbackId = feedbackIdFor(email);
      // The governor per mailbox provider and the sender domain's warm-up: held back untried, due later.
      const heldUntil = await governor.admit(email);
      if (heldUntil !== undefined) return await requeueUncharged(pool, [email.id], null, new Date(heldUntil));
      // The first relay of its route whose breaker admits it; none: it waits, uncharged, until its
      // route's next probe (else loops still claiming would take it again at once).
      const route = routeOf(email);
      const choice = router.choose(route);
      if (!choice) {
        await requeueUncharged(pool, [email.id], null, router.claiming ? router.nextTryAt(route) : null);
        return;
      }
      const handedAt = performance.now();
      const sent = await choice.relay.transport
        .send(
          email.mime
            ? // Built by its sender (SMTP submission): its own bytes, with Feedback-ID on top.
              { envelope, raw: Buffer.concat([Buffer.from(`Feedback-ID: ${feedbackId}\r\n`), email.mime]), dkim }
            : {
                messageId: email.message_id,
                from: { name: email.from_name ?? '', address: email.from_email },
                to: { name: email.to_name ?? '', address: email.to_email },
                cc: email.cc?.map((r) => ({ name: r.name ?? '', address: r.email })),
                envelope,
                replyTo: email.reply_to ?? undefined,
                subject: message.subject,
                html: message.html,
                text: message.text,
                headers: { ...message.headers, 'Feedback-ID': feedbackId },
                attachments: email.attachments.map((a) => ({
                  filename: a.filename,
                  content: a.content,
                  encoding: 'base64',
                  contentType: a.contentType,
                })),
                dkim,
              },
        )
        .then(
          (info) => {
            router.answered(choice);
            return info;
          },
          (err: DeliveryError) => {
            // Before the loop goes on to the next message, so that one is not tried on a dead relay.
            if (classifyDeliveryError(err) === 'transport') router.failed(choice, err.message);
            else if (err.responseCode) router.answered(choice);
            else router.notSent(choice);
            throw err;
          },
        )
        .finally(handedOver);
      governor.answered(email.id);
      // Copies refused at RCPT leave the message SENT to its recipient, naming them in last_error; its
      // own recipient refused for good is its bounce (ARCHITECTURE.md, "Refused copies").
      const ownRefusal = sent.refused?.find((e) => e.recipient?.toLowerCase() === email.to_email.toLowerCase());
      if (ownRefusal && classifyDeliveryError(ownRefusal) === 'bounce') throw ownRefusal;
      await (choice.relay.kind === 'smtp' ? recordSmtpSent : recordOtherSent)({
        id: email.id,
        file: sent.file ?? null,
        providerId: sent.providerMessageId ?? null,
        refused: refusedRecipients(sent),
        relay: choice.relay.name,
      });
      recordDeliveryOutcome('sent', {
        transport: choice.relay.kind,
        relay: choice.relay.name,
        transportSeconds: (performance.now() - handedAt) / 1000,
      });
    } catch (err) {
      governor.answered(email.id, err as DeliveryError);
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
  async function recordFailure(email: ClaimedEmail, err: DeliveryError) {
    const reason = err.message.slice(0, 500);
    const kind = classifyDeliveryError(err);
    if (kind === 'transport') {
      await requeueUncharged(pool, [email.id], reason);
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
    const status = await retryLater(pool, email.id, { reason, delaySeconds, lifetimeSeconds: lifetimeMs / 1000 });
    const final = status === 'FAILED';
    recordDeliveryOutcome(final ? 'failed' : 'deferred', { error: reason });
    logger.warn({ emailId: email.id, attempt: email.attempts, final, err: reason }, 'delivery attempt failed');
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
          const reclaimed = await reclaimAbandoned(
            pool,
            [...held],
            deps.config.delivery.claimTimeoutSeconds,
            await queueWindow.current(),
          );
          if (reclaimed) deliveryReclaimed.inc(reclaimed);
        }
        const admission = router.admit();
        if (admission.kind === 'wait') {
          await idle(Math.max(10, Math.min(IDLE_POLL_MS, admission.ms)));
          continue;
        }
        probe = admission.kind === 'probe';
        if (probe) await failExpiredQueued(pool, lifetimeMs / 1000);
        const rows = probe ? await claimEmails(pool, 1, await queueWindow.current()) : await claimBatch();
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
          // Stopping, or every relay went down meanwhile: the rest goes back untried.
          if (!running || (router.allOpen && !probe)) break;
          started.add(email.id);
          await new Promise<void>((handedOver) =>
            outcomes.push(
              deliver(email, batch, handedOver).catch((err) => logger.error({ err }, 'delivery outcome not recorded')),
            ),
          );
        }
        await Promise.all(outcomes);
        const left = rows.filter((r) => !started.has(r.id)).map((r) => r.id);
        if (left.length) await requeueUncharged(pool, left, null);
      } catch (err) {
        logger.error({ err }, 'delivery loop error');
        await new Promise((r) => setTimeout(r, 1000));
      } finally {
        for (const id of claimed) held.delete(id);
        // The probe claim is over: its message went (the relay's breaker has the outcome) or tested nothing.
        if (probe) router.probeClaimDone();
      }
    }
  }

  const loops = Array.from({ length: deps.config.delivery.concurrency }, () => loop());
  logger.info({ workers: loops.length }, 'delivery started');
  return {
    async stop(graceMs) {
      running = false;
      sleepers.stop();
      await Promise.race([Promise.all(loops), new Promise((r) => setTimeout(r, graceMs))]);
      await listener.end().catch(() => {});
    },
  };
}
