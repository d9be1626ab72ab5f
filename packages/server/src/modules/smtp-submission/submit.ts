import { createHash } from 'node:crypto';
import type { AppDeps } from '../../deps.js';
import { type QueuedSend, sendEmail } from '../emails/public.js';
import { findClaim, recordKey } from '../idempotency/public.js';
import type { Submission } from './message.js';
import { SmtpReply } from './replies.js';

/** What a key recorded by a submission is called (its `request`), beside `POST /v1/send`'s. */
const REQUEST = 'SMTP submission';
const PRINTABLE_KEY = /^[\x20-\x7e]{1,255}$/;

export interface Accepted {
  /** The emails queued, one per envelope recipient sent to. */
  emails: string[];
  /** Recipients not sent to (suppressed, or unsubscribed from MARKETING mail). */
  skipped: string[];
  /** A retry of a message already accepted: nothing was queued now. */
  repeated: boolean;
}

/** The Message-ID was taken when the send went to commit: its work is rolled back. */
class AlreadyRecorded extends Error {}

/**
 * One submitted message through `POST /v1/send`'s path (`sendEmail` with the built message), once
 * per Message-ID: the sender's Message-ID is the message's Idempotency-Key, kept in the same table
 * as the header's (`http/idempotency.ts`) and recorded in the send's own transaction, so a client
 * that lost the 250 and sends again within `IDEMPOTENCY_TTL_HOURS` gets the first answer and nothing
 * is sent twice, and a refused send leaves no key behind.
 */
export async function submitOnce(deps: AppDeps, projectId: string, submission: Submission): Promise<Accepted> {
  const { body, built, ownMessageId, hash } = submission;
  if (!ownMessageId) return accepted(await sendEmail(deps, projectId, body, body, { built }), false);
  const key = idempotencyKeyOf(built.messageId);
  const record = { key, request: REQUEST, requestHash: hash, ttlHours: deps.config.idempotencyTtlHours };
  try {
    const result = await sendEmail(deps, projectId, body, body, {
      built,
      beforeCommit: async (tx, queued) => {
        if (!(await recordKey(tx, projectId, { ...record, response: { success: true, data: queued } }))) {
          throw new AlreadyRecorded();
        }
      },
    });
    return accepted(result, false);
  } catch (err) {
    if (!(err instanceof AlreadyRecorded)) throw err;
  }
  const first = await findClaim(deps.db.pool, projectId, key);
  if (!first) throw new SmtpReply(451, '4.3.0 A message with this Message-ID just expired; try again');
  if (first.request !== REQUEST || first.request_hash !== hash) {
    throw new SmtpReply(
      550,
      `5.7.0 Message-ID ${built.messageId} was already used for another message; give each message its own`,
    );
  }
  return accepted((first.response as { data: QueuedSend }).data, true);
}

const accepted = (result: QueuedSend, repeated: boolean): Accepted => ({
  emails: result.emails.map((e) => e.email),
  skipped: result.skipped.map((s) => `${s.contact.email} (${s.reason})`),
  repeated,
});

/** A Message-ID as an Idempotency-Key: itself when it fits the header's rule, else its digest. */
const idempotencyKeyOf = (messageId: string) =>
  PRINTABLE_KEY.test(messageId) ? messageId : `sha256:${createHash('sha256').update(messageId).digest('base64url')}`;
