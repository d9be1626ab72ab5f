import { AppError, type ErrorKind } from '../../kit/errors.js';

/**
 * An SMTP reply that refuses: `code` is the reply code, `text` starts with its enhanced status code
 * (RFC 3463), written by Pigeon rather than by smtp-server (whose code per reply number is too coarse:
 * every 550 would be "5.1.1 mailbox unavailable").
 */
export class SmtpReply extends Error {
  constructor(
    readonly responseCode: number,
    text: string,
  ) {
    super(oneLine(text));
    this.name = 'SmtpReply';
  }
}

/** A reply line: no control characters, at most 400 characters (RFC 5321 allows 512 with the code). */
const oneLine = (text: string) =>
  text
    // biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
    .replace(/[\x00-\x1f\x7f]+/g, ' ')
    .trim()
    .slice(0, 400);

/** The kinds that are the server's trouble, not the sender's: a transient 451. */
const NOT_THE_CLIENTS: ReadonlySet<ErrorKind> = new Set(['internal', 'upstream', 'unavailable']);

/** A refusal of the send path in SMTP's words; undefined for an error that is not the client's (a 451 then). */
export function replyOfSendError(err: unknown): SmtpReply | undefined {
  if (err instanceof SmtpReply) return err;
  if (!(err instanceof AppError) || NOT_THE_CLIENTS.has(err.kind)) return undefined;
  const details = err.extra.details ?? {};
  if (details.reason === 'DOMAIN_NOT_VERIFIED') {
    return new SmtpReply(
      550,
      `5.7.1 Sender domain ${String(details.domain)} is not verified for this project: add it under Domains and publish its DNS records`,
    );
  }
  switch (err.code) {
    case 'RATE_LIMIT_EXCEEDED':
      return new SmtpReply(451, `4.7.1 ${err.message}; try again in ${String(details.retryAfterSeconds ?? 60)} s`);
    case 'BILLING_LIMIT_EXCEEDED':
    case 'PROJECT_DISABLED':
      return new SmtpReply(550, `5.7.1 ${err.message}`);
    case 'VALIDATION_ERROR':
      return new SmtpReply(550, `5.6.0 ${err.message}`);
    default:
      return new SmtpReply(550, `5.7.0 ${err.message}`);
  }
}

export const TEMPORARY_FAILURE = () => new SmtpReply(451, '4.3.0 Temporary failure on our side, try again later');
