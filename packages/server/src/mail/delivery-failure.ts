/**
 * The two kinds of delivery failure (DESIGN.md §9). A message's own failure is an answer about that
 * message or recipient: 5xx is final (a bounce), 4xx is tried again later and uses one of its tries.
 * A transport failure says nothing about the message (the relay is unreachable, refuses the session,
 * or the API throttles): the transport is paused and the message waits without using a try.
 */
export type DeliveryFailure = 'bounce' | 'temporary' | 'transport';

export interface DeliveryError extends Error {
  code?: string;
  responseCode?: number;
  /** The SMTP command answered (nodemailer): CONN is the greeting, AUTH … the login. */
  command?: string;
  /** The refused address and the relay's reply, on a RCPT refusal (nodemailer). */
  recipient?: string;
  response?: string;
  /** Set by a transport (SES) that knows the failure is its own. */
  transportFailure?: boolean;
}

/** Socket, DNS, TLS and login failures: nodemailer's codes and Node's own. */
const TRANSPORT_CODES = new Set([
  'ECONNECTION',
  'ETIMEDOUT',
  'ESOCKET',
  'ETLS',
  'EAUTH',
  'EDNS',
  'EPROTOCOL',
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** Commands whose refusal is about the session, not a message. */
const SESSION_COMMANDS = /^(CONN|EHLO|HELO|LHLO|STARTTLS|AUTH)/;

export function classifyDeliveryError(err: DeliveryError): DeliveryFailure {
  if (err.transportFailure) return 'transport';
  const reply = err.responseCode;
  // 421: the server is closing the session (RFC 5321 4.2), whichever command it answered.
  if (reply === 421) return 'transport';
  if (reply && err.command && SESSION_COMMANDS.test(err.command)) return 'transport';
  if (reply && reply >= 500) return 'bounce';
  if (reply && reply >= 400) return 'temporary';
  if (err.code && TRANSPORT_CODES.has(err.code)) return 'transport';
  return 'temporary';
}
