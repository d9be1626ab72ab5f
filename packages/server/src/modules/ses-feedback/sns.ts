import MessageValidator from 'sns-validator';
import type { AppDeps } from '../../deps.js';
import { AppError } from '../../kit/errors.js';
import { parseSesNotification } from './notification.js';
import { recordSesFeedback } from './record.js';

/** Where SNS keeps its signing certificates and confirmation links: sns.<region>.amazonaws.com(.cn). */
const SNS_HOST = /^sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$/;
/** A signed message older than this is refused: SNS's retries of one delivery end well within it. */
const MAX_AGE_MS = 60 * 60 * 1000;

/** How AWS names its signing certificates; anything else on the SNS host is not fetched at all. */
const CERT_PATH = /^\/SimpleNotificationService-[A-Za-z0-9-]+\.pem$/;

/** One per process: it caches each signing certificate it fetched, by URL. */
const validator = new MessageValidator(SNS_HOST);

const invalid = (message: string) => new AppError('invalid', 'INVALID_SIGNATURE', message);

function verify(message: Record<string, unknown>): Promise<void> {
  const certUrl = URL.canParse(String(message.SigningCertURL)) ? new URL(String(message.SigningCertURL)) : undefined;
  if (!certUrl || !CERT_PATH.test(certUrl.pathname) || certUrl.search) {
    return Promise.reject(invalid('SigningCertURL is not an SNS signing certificate URL'));
  }
  return new Promise((resolve, reject) =>
    validator.validate(message, (err) =>
      err ? reject(invalid(`SNS signature check failed: ${err.message}`)) : resolve(),
    ),
  );
}

/**
 * POST /webhooks/sns: an SNS message, verified against AWS's signing certificate (fetched only
 * from an https URL on the SNS host pattern, cached per process) and not older than an hour.
 * Subscription confirmations are confirmed by visiting their SubscribeURL (on the same host
 * pattern); notifications from SES are recorded on the email they are about, once per SNS
 * MessageId (a redelivery or replay is acknowledged and ignored).
 */
export async function receiveSnsMessage(
  deps: AppDeps,
  message: Record<string, unknown>,
): Promise<{ received: true; type: string }> {
  await verify(message);
  const sentAt = Date.parse(String(message.Timestamp));
  if (Number.isNaN(sentAt) || deps.clock.nowMs() - sentAt > MAX_AGE_MS) {
    throw invalid('The SNS message is stale (Timestamp older than an hour)');
  }
  const type = String(message.Type);
  if (type === 'SubscriptionConfirmation') {
    await confirmSubscription(String(message.SubscribeURL));
    deps.logger.info({ topicArn: message.TopicArn }, 'SNS subscription confirmed');
    return { received: true, type };
  }
  if (type !== 'Notification') return { received: true, type };
  const feedback = parseSesNotification(String(message.Message));
  if (!feedback) return { received: true, type: 'Ignored' };
  const outcome = await recordSesFeedback(deps, String(message.MessageId), feedback);
  if (!outcome) {
    deps.logger.warn({ messageId: feedback.messageId }, 'SES notification for an unknown email');
    return { received: true, type: `ses.${feedback.kind}` };
  }
  if (!outcome.recorded) return { received: true, type: 'Duplicate' };
  return { received: true, type: `ses.${feedback.kind}` };
}

async function confirmSubscription(subscribeUrl: string): Promise<void> {
  let url: URL;
  try {
    url = new URL(subscribeUrl);
  } catch {
    throw invalid('SubscribeURL is not a URL');
  }
  if (url.protocol !== 'https:' || !SNS_HOST.test(url.hostname)) {
    throw invalid('SubscribeURL is not on an SNS host (https://sns.<region>.amazonaws.com)');
  }
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) }).catch((err: Error) => {
    throw new AppError('upstream', 'UPSTREAM_ERROR', `Could not confirm the SNS subscription: ${err.message}`);
  });
  if (!res.ok)
    throw new AppError('upstream', 'UPSTREAM_ERROR', `SNS refused the subscription confirmation (${res.status})`);
}
