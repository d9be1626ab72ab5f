import { createHash } from 'node:crypto';
import type { AppDeps } from '../../deps.js';
import { certainlyRolledBack } from '../../http/error-handler.js';
import { AppError } from '../../http/errors.js';
import { claimKey, releaseKey, settleKey } from '../../http/idempotency.js';
import { sendEmail } from '../emails/send.js';
import type { Submission } from './message.js';
import { SmtpReply } from './replies.js';

/** What a claim made by a submission is called (its `request`), beside `POST /v1/send`'s. */
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

type SendResult = Awaited<ReturnType<typeof sendEmail>>;

/**
 * One submitted message through `POST /v1/send`'s path (`sendEmail` with the built message), once
 * per Message-ID: the sender's Message-ID is the message's Idempotency-Key, claimed in the same
 * table and way as the header's (`http/idempotency.ts`), so a client that lost the 250 and sends
 * again within `IDEMPOTENCY_TTL_HOURS` gets the first answer and nothing is sent twice. A claim
 * whose send refused (or rolled back) is released, so a corrected message can go.
 */
export async function submitOnce(deps: AppDeps, projectId: string, submission: Submission): Promise<Accepted> {
  if (!submission.ownMessageId) return accepted(await send(deps, projectId, submission), false);
  const key = idempotencyKeyOf(submission.built.messageId);
  const existing = await claimKey(deps, projectId, key, REQUEST, submission.hash);
  if (existing) {
    if (existing.request !== REQUEST || (existing.request_hash ?? submission.hash) !== submission.hash) {
      throw new SmtpReply(
        550,
        `5.7.0 Message-ID ${submission.built.messageId} was already used for another message; give each message its own`,
      );
    }
    const first = (existing.response as { data?: SendResult } | null)?.data;
    if (existing.status_code === null || !first) {
      throw new SmtpReply(451, '4.3.0 This message is being accepted on another connection; try again shortly');
    }
    return accepted(first, true);
  }
  const db = deps.db.pool;
  try {
    const result = await send(deps, projectId, submission);
    await settleKey(db, projectId, key, 200, { success: true, data: result });
    return accepted(result, false);
  } catch (err) {
    const refused = err instanceof SmtpReply || (err instanceof AppError && err.statusCode < 500);
    if (refused || certainlyRolledBack(err)) await releaseKey(db, projectId, key).catch(() => {});
    throw err;
  }
}

const send = (deps: AppDeps, projectId: string, submission: Submission) =>
  sendEmail(deps, projectId, submission.body, submission.body, submission.built);

const accepted = (result: SendResult, repeated: boolean): Accepted => ({
  emails: result.emails.map((e) => e.email),
  skipped: result.skipped.map((s) => `${s.contact.email} (${s.reason})`),
  repeated,
});

/** A Message-ID as an Idempotency-Key: itself when it fits the header's rule, else its digest. */
const idempotencyKeyOf = (messageId: string) =>
  PRINTABLE_KEY.test(messageId) ? messageId : `sha256:${createHash('sha256').update(messageId).digest('base64url')}`;
