import { keyringOf } from '../../db/at-rest.js';
import type { AppDeps } from '../../deps.js';
import type { ListenHub } from '../../jobs/listen-hub.js';
import { type RunningLoop, startLoop } from '../../jobs/loop.js';
import { classifyDeliveryError, type DeliveryError } from '../../mail/delivery-failure.js';
import { routeNames, streamOf } from '../../mail/relays.js';
import { refusedRecipients } from '../../mail/transport.js';
import { markTransportDown, markTransportUp } from '../../mail/transport-status.js';
import { recordDeliveryOutcome } from '../../metrics/delivery.js';
import { deliveryReclaimed } from '../../metrics/registry.js';
import { feedbackIdFor, recordDeliveryFeedback, returnPathFor } from '../deliverability/public.js';
import { dkimKeyObject } from '../domains/public.js';
import {
  type ClaimedEmail,
  claimEmails,
  failExpiredClaimed,
  failExpiredQueued,
  NOTIFY_CHANNEL,
  type QueueWindowSource,
  queueWindowSource,
  REQUEUED_PAYLOAD,
  reclaimAbandoned,
  requeueUncharged,
  retryLater,
} from '../email-states/public.js';
import type { Governor } from '../sending-governor/public.js';
import { dropClaimed } from './cancelled.js';
import type { DeferredBatch, DeliveryComposer, DeliveryComposers } from './composers.js';
import { startGovernor } from './governor.js';
import { tellOwnersOfOutage, tellOwnersOfRecovery } from './outage-notice.js';
import { type ProjectRoutesCache, projectRoutesCache } from './project-routes.js';
import { RelayRouter } from './relay-router.js';
import { sentRecorder } from './sent-recorder.js';
import { sharedClaim } from './shared-claim.js';

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

export type Delivery = Pick<RunningLoop, 'stop'>;

/** What every stage of one process's delivery shares: its relays, governor, composer and claims. */
interface DeliveryContext {
  deps: AppDeps;
  pool: AppDeps['db']['pool'];
  logger: AppDeps['logger'];
  router: RelayRouter;
  governor: Governor;
  composer: DeliveryComposer;
  queueWindow: QueueWindowSource;
  claimBatch: () => Promise<ClaimedEmail[]>;
  projectRoutes: ProjectRoutesCache;
  /** Every relay's name, in `RELAYS` order. */
  relayNames: string[];
  keyring: ReturnType<typeof keyringOf>;
  recordSent: { smtp: ReturnType<typeof sentRecorder>; other: ReturnType<typeof sentRecorder> };
  /** Ids this process has claimed and not settled yet (never reclaimed as a dead worker's). */
  held: Set<string>;
}

/** A claim: its rows (with `probe`, the one message that tests relays that are down), or how long to wait. */
type DeliveryClaim = { rows: ClaimedEmail[]; probe: boolean } | { waitMs: number };

/** What the composition of a claimed batch needs, read once for the batch (one query per source). */
type Batch = { campaigns: DeferredBatch };

/**
 * The delivery workers: one loop (`jobs/loop.ts`) whose runners claim queued emails in batches
 * (one claim statement in flight per process, FOR UPDATE SKIP LOCKED, transactional first, with
 * their DKIM keys), read what the batch's composition needs in one query per source, then per
 * message go through the stages: compose, sign (the DKIM options), send through the first relay of
 * its route that admits it, record (one record statement in flight per process). A claim whose
 * worker died times out and is retried; SMTP only accepts a message on its final reply, so a
 * worker killed before that reply leaves nothing delivered.
 */
export async function startDelivery(deps: AppDeps, hub: ListenHub, composers: DeliveryComposers): Promise<Delivery> {
  const idleMs = deps.config.delivery.pollMs;
  let wake = () => {};
  const ctx = deliveryContext(deps, composers.campaign, () => wake());
  await hub.subscribe(ctx.composer.channel, (payload) => payload && ctx.composer.heard(payload));
  const loop = await startLoop<DeliveryClaim>(hub, deps.logger, {
    name: 'delivery',
    channels: [NOTIFY_CHANNEL],
    heard: (_channel, payload) => payload === REQUEUED_PAYLOAD && ctx.queueWindow.invalidate(),
    concurrency: deps.config.delivery.concurrency,
    claim: () => claimStage(ctx),
    handle: (claim, stopping) => ('rows' in claim ? handleClaim(ctx, claim, stopping) : Promise.resolve()),
    again: (claim) => 'rows' in claim,
    idleMs: (claim) => (claim && 'waitMs' in claim ? Math.max(10, Math.min(idleMs, claim.waitMs)) : idleMs),
    // A claim older than the timeout belongs to a worker that died: back to the queue, with no
    // attempt used (nothing answered about the message; its lifetime still bounds it). Never this
    // process's own claims: a slow batch here is not a dead worker.
    reclaim: {
      everyMs: RECLAIM_EVERY_MS,
      run: async () => {
        const reclaimed = await reclaimAbandoned(
          ctx.pool,
          [...ctx.held],
          deps.config.delivery.claimTimeoutSeconds,
          await ctx.queueWindow.current(),
        );
        if (reclaimed) deliveryReclaimed.inc(reclaimed);
      },
    },
  });
  wake = loop.wake;
  return loop;
}

function deliveryContext(deps: AppDeps, composer: DeliveryComposer, wake: () => void): DeliveryContext {
  const pool = deps.db.pool;
  const logger = deps.logger.child({ component: 'delivery' });
  const { outageNotifyMs } = deps.config.delivery;
  const queueWindow = queueWindowSource(pool);
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
      wake();
      void markTransportUp(pool, transport)
        .then((outage) => tellOwnersOfRecovery(deps, transport, outage, outageNotifyMs))
        .catch((err) => logger.error({ err }, 'transport status not recorded'));
    },
  }));
  return {
    deps,
    pool,
    logger,
    router,
    governor: startGovernor(deps),
    composer,
    queueWindow,
    claimBatch: sharedClaim(pool, deps.config.delivery.claimBatch, queueWindow),
    projectRoutes: projectRoutesCache(pool, deps.relays.list.length > 1),
    relayNames: deps.relays.list.map((r) => r.name),
    keyring: keyringOf(deps.config),
    // An SMTP relay's final 250 is also the delivery; SES and the outbox only took the message.
    recordSent: { smtp: sentRecorder(pool, true), other: sentRecorder(pool, false) },
    held: new Set(),
  };
}

// ---- Stage 1: claim

/** A batch of queued emails, or one probe message while every relay is down, or how long to wait. */
async function claimStage(ctx: DeliveryContext): Promise<DeliveryClaim | undefined> {
  const admission = ctx.router.admit();
  if (admission.kind === 'wait') return { waitMs: admission.ms };
  const probe = admission.kind === 'probe';
  try {
    const { lifetimeMs } = ctx.deps.config.delivery;
    if (probe) await failExpiredQueued(ctx.pool, lifetimeMs / 1000);
    const rows = probe ? await claimEmails(ctx.pool, 1, await ctx.queueWindow.current()) : await ctx.claimBatch();
    if (rows.length === 0) {
      if (probe) ctx.router.probeClaimDone();
      return undefined;
    }
    for (const r of rows) ctx.held.add(r.id);
    return { rows, probe };
  } catch (err) {
    if (probe) ctx.router.probeClaimDone();
    throw err;
  }
}

/**
 * A claimed batch: read what composing it needs, then each message in turn. The next message goes
 * as soon as the transport has answered this one; the outcomes are written meanwhile (group
 * commit) and awaited before the next claim. Stopping, or every relay down meanwhile: the rest goes
 * back untried.
 */
async function handleClaim(
  ctx: DeliveryContext,
  { rows, probe }: { rows: ClaimedEmail[]; probe: boolean },
  stopping: () => boolean,
): Promise<void> {
  try {
    let batch: Batch;
    try {
      batch = await prepareBatch(ctx, rows);
    } catch (err) {
      for (const email of rows) await recordFailure(ctx, email, err as Error);
      return;
    }
    const outcomes: Array<Promise<void>> = [];
    const started = new Set<string>();
    for (const email of rows) {
      if (stopping() || (ctx.router.allOpen && !probe)) break;
      started.add(email.id);
      await new Promise<void>((handedOver) =>
        outcomes.push(
          deliverOne(ctx, email, batch, handedOver).catch((err) =>
            ctx.logger.error({ err }, 'delivery outcome not recorded'),
          ),
        ),
      );
    }
    await Promise.all(outcomes);
    const left = rows.filter((r) => !started.has(r.id)).map((r) => r.id);
    if (left.length) await requeueUncharged(ctx.pool, left, null);
  } finally {
    for (const r of rows) ctx.held.delete(r.id);
    // The probe claim is over: its message went (the relay's breaker has the outcome) or tested nothing.
    if (probe) ctx.router.probeClaimDone();
  }
}

// ---- Stage 2: compose

async function prepareBatch(ctx: DeliveryContext, rows: ClaimedEmail[]): Promise<Batch> {
  await ctx.projectRoutes.load(rows.map((r) => r.project_id));
  return {
    campaigns: await ctx.composer.load(
      rows.flatMap((r) => (r.campaign_id ? [{ ...r, campaign_id: r.campaign_id }] : [])),
    ),
  };
}

/** Campaign mail is composed here, per contact; other mail was composed when it was accepted. */
async function composeStage(email: ClaimedEmail, batch: Batch) {
  if (email.campaign_id) return batch.campaigns.compose({ ...email, campaign_id: email.campaign_id });
  return email;
}

type Composed = NonNullable<Awaited<ReturnType<typeof composeStage>>>;

// ---- Stage 3: sign

/** The DKIM signature nodemailer adds as it writes the message (a parsed key, cached per domain key). */
function signStage(ctx: DeliveryContext, email: ClaimedEmail) {
  if (!(email.dkim_selector && email.dkim_private_key)) return undefined;
  return {
    domainName: email.from_email.split('@')[1] ?? '',
    keySelector: email.dkim_selector,
    privateKey: dkimKeyObject(email.dkim_private_key, ctx.keyring) as never,
    headerFieldNames: DKIM_SIGNED_HEADERS,
  };
}

// ---- Stage 4: send

/** The relays a message tries, in order: its project's route for its stream, else the installation's. */
function routeOf(ctx: DeliveryContext, email: ClaimedEmail) {
  const stream = streamOf(email.source);
  const projectRoute = ctx.projectRoutes.get(email.project_id)?.[stream] ?? null;
  return routeNames(ctx.deps.relays.routes, ctx.relayNames, stream, projectRoute);
}

type RelayChoice = NonNullable<ReturnType<RelayRouter['choose']>>;

/** Hands the message to the relay; the breaker hears how it answered before the next message goes. */
function sendStage(
  ctx: DeliveryContext,
  email: ClaimedEmail,
  message: Composed,
  dkim: ReturnType<typeof signStage>,
  choice: RelayChoice,
) {
  // VERP: asynchronous bounces come back to an address that names this email. Bcc: envelope only.
  const { linkSigning } = ctx.deps.config.secrets;
  const envelope = {
    from: returnPathFor(email.id, linkSigning, ctx.deps.config.deliverability.bounceDomain),
    to: envelopeRecipients(email),
  };
  const feedbackId = feedbackIdFor(email);
  return choice.relay.transport
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
        ctx.router.answered(choice);
        return info;
      },
      (err: DeliveryError) => {
        if (classifyDeliveryError(err) === 'transport') ctx.router.failed(choice, err.message);
        else if (err.responseCode) ctx.router.answered(choice);
        else ctx.router.notSent(choice);
        throw err;
      },
    );
}

/** One message through the stages; `handedOver` is called once the transport has answered (or it never got there). */
async function deliverOne(ctx: DeliveryContext, email: ClaimedEmail, batch: Batch, handedOver: () => void) {
  const { pool, governor, router } = ctx;
  try {
    // Suppressed after it was queued (a hard bounce or complaint since): not sent, and said why.
    if (email.suppressed) {
      await dropClaimed(pool, email.id, `suppressed: ${email.suppressed}`);
      recordDeliveryOutcome('suppressed');
      return;
    }
    if (expired(ctx, email)) {
      await failExpiredClaimed(pool, [email.id]);
      return;
    }
    const message = await composeStage(email, batch);
    if (!message) {
      await dropClaimed(pool, email.id, null);
      recordDeliveryOutcome('cancelled');
      return;
    }
    const dkim = signStage(ctx, email);
    // The governor per mailbox provider and the sender domain's warm-up: held back untried, due later.
    const heldUntil = await governor.admit(email);
    if (heldUntil !== undefined) return await requeueUncharged(pool, [email.id], null, new Date(heldUntil));
    // The first relay of its route whose breaker admits it; none: it waits, uncharged, until its
    // route's next probe (else loops still claiming would take it again at once).
    const route = routeOf(ctx, email);
    const choice = router.choose(route);
    if (!choice) {
      await requeueUncharged(pool, [email.id], null, router.claiming ? router.nextTryAt(route) : null);
      return;
    }
    const handedAt = performance.now();
    const sent = await sendStage(ctx, email, message, dkim, choice).finally(handedOver);
    governor.answered(email.id);
    await recordSentStage(ctx, email, sent, choice, handedAt);
  } catch (err) {
    governor.answered(email.id, err as DeliveryError);
    await recordFailure(ctx, email, err as DeliveryError);
  } finally {
    handedOver();
  }
}

const expired = (ctx: DeliveryContext, email: ClaimedEmail) =>
  ctx.deps.clock.nowMs() >=
  new Date(email.requeued_at ?? email.created_at).getTime() + ctx.deps.config.delivery.lifetimeMs;

// ---- Stage 5: record

async function recordSentStage(
  ctx: DeliveryContext,
  email: ClaimedEmail,
  sent: Awaited<ReturnType<typeof sendStage>>,
  choice: RelayChoice,
  handedAt: number,
) {
  // Copies refused at RCPT leave the message SENT to its recipient, naming them in last_error; its
  // own recipient refused for good is its bounce (ARCHITECTURE.md, "Refused copies").
  const ownRefusal = sent.refused?.find((e) => e.recipient?.toLowerCase() === email.to_email.toLowerCase());
  if (ownRefusal && classifyDeliveryError(ownRefusal) === 'bounce') throw ownRefusal;
  await ctx.recordSent[choice.relay.kind === 'smtp' ? 'smtp' : 'other']({
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
}

/**
 * The transport's failure: the message goes back to the queue as it was (no attempt used) and the
 * breaker pauses the transport. A 5xx reply about the message is a hard bounce, recorded like any
 * other feedback (event, suppression of the address, health check). Anything else is the message's
 * temporary failure: tried again after `retryBaseMs` doubled per attempt (at most `retryMaxMs`),
 * never later than the end of its lifetime, and FAILED once that has passed.
 */
async function recordFailure(ctx: DeliveryContext, email: ClaimedEmail, err: DeliveryError) {
  const { pool, deps } = ctx;
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
  const { retryBaseMs, retryMaxMs, lifetimeMs } = deps.config.delivery;
  const delaySeconds = Math.min(retryMaxMs, 2 ** Math.min(email.attempts - 1, 30) * retryBaseMs) / 1000;
  const status = await retryLater(pool, email.id, { reason, delaySeconds, lifetimeSeconds: lifetimeMs / 1000 });
  const final = status === 'FAILED';
  recordDeliveryOutcome(final ? 'failed' : 'deferred', { error: reason });
  ctx.logger.warn({ emailId: email.id, attempt: email.attempts, final, err: reason }, 'delivery attempt failed');
}
