import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import type { AppDeps } from '../../deps.js';
import { readMessage } from '../../mail/smtp-data.js';
import { receiveDmarcReports } from '../dmarc-reports/public.js';
import { authResolver, matchRecipient, type RouteMatch, receiveMessage } from '../inbound-routes/public.js';
import { recordDeliveryFeedback } from './feedback.js';
import { feedbackOfReport } from './reports.js';
import { emailIdOfReturnPath } from './verp.js';

export interface InboundReceiver {
  port: number;
  stop(): Promise<void>;
}

const smtpError = (responseCode: number, message: string) => Object.assign(new Error(message), { responseCode });

/** Messages per remote address per minute (fixed windows, in memory: a flood is per connection source). */
function floodGuard(perMinute: number) {
  let windowStart = Date.now();
  let counts = new Map<string, number>();
  return (address: string): boolean => {
    if (Date.now() - windowStart >= 60_000) {
      windowStart = Date.now();
      counts = new Map();
    }
    const n = (counts.get(address) ?? 0) + 1;
    counts.set(address, n);
    return n <= perMinute;
  };
}

/**
 * The inbound SMTP receiver (`INBOUND_SMTP_PORT`, off by default). It accepts mail for signed
 * VERP addresses of the bounce domain and, after them, for the addresses an enabled inbound route
 * takes (modules/inbound-routes; anything else is refused at RCPT with 550 5.1.1), reads each
 * message up to `INBOUND_SMTP_MAX_BYTES` (552 beyond). For VERP recipients it records the DSN or
 * ARF report the message carries through `recordDeliveryFeedback` (a message that is neither gets
 * 550 and records nothing); for the DMARC report address (`DMARC_REPORT_ADDRESS`) it stores the
 * aggregate reports attached (modules/dmarc-reports); for routed recipients it hands the message
 * to `receiveMessage`. A
 * failure on Pigeon's side gets 451 so the sender retries. Every refusal is logged.
 */
export async function startInboundReceiver(deps: AppDeps): Promise<InboundReceiver | undefined> {
  const settings = deps.config.deliverability.inbound;
  if (settings.port === undefined) return undefined;
  const logger = deps.logger.child({ component: 'inbound-smtp' });
  const allow = floodGuard(settings.messagesPerMinute);
  const { linkSigning } = deps.config.secrets;
  const { bounceDomain } = deps.config.deliverability;
  const emailIdOf = (address: string) => emailIdOfReturnPath(address, linkSigning, bounceDomain);
  const dmarcAddress = deps.config.deliverability.dmarcReports.address;
  const isDmarcAddress = (address: string) => address.toLowerCase() === dmarcAddress;

  const refuse = (session: SMTPServerSession, code: number, message: string, extra: Record<string, unknown> = {}) => {
    logger.warn({ remoteAddress: session.remoteAddress, code, ...extra }, `inbound mail refused: ${message}`);
    return smtpError(code, message);
  };

  const resolver = authResolver(deps.config.dns.servers);
  /** Per session: the route each accepted recipient matched at RCPT. */
  const routed = new Map<string, Map<string, RouteMatch>>();

  async function handle(raw: Buffer, session: SMTPServerSession): Promise<void> {
    const reportTo = session.envelope.rcptTo.filter((r) => emailIdOf(r.address));
    const matches = [...(routed.get(session.id)?.values() ?? [])];
    if (reportTo.length > 0) await recordFeedback(raw, session, reportTo, matches.length === 0);
    if (session.envelope.rcptTo.some((r) => isDmarcAddress(r.address))) {
      const reports = await receiveDmarcReports(deps, raw).catch((err: Error & { responseCode?: number }) => {
        // Also addressed to a route: the routes take it.
        if (err.responseCode && matches.length > 0) return [];
        throw err.responseCode ? refuse(session, err.responseCode, err.message) : err;
      });
      for (const r of reports) logger.info(r, 'DMARC report received');
    }
    if (matches.length === 0) return;
    const mailFrom = session.envelope.mailFrom;
    const arrival = {
      ip: session.remoteAddress,
      helo: session.hostNameAppearsAs,
      sender: mailFrom ? mailFrom.address : '',
      mta: bounceDomain,
    };
    const received = await receiveMessage(deps, raw, matches, arrival, resolver);
    for (const r of received) logger.info(r, 'inbound mail received');
  }

  async function recordFeedback(
    raw: Buffer,
    session: SMTPServerSession,
    reportTo: { address: string }[],
    only: boolean,
  ): Promise<void> {
    const feedback = await feedbackOfReport(raw).catch(() => undefined);
    if (!feedback) {
      if (!only) return; // also addressed to a route: the routes take it
      throw refuse(session, 550, '5.6.0 Not a delivery status notification or feedback report');
    }
    for (const rcpt of reportTo) {
      const emailId = emailIdOf(rcpt.address);
      if (!emailId) continue;
      const outcome = await recordDeliveryFeedback(deps, emailId, feedback);
      if (!outcome) throw refuse(session, 550, '5.1.1 No such message', { emailId });
      logger.info({ emailId, kind: feedback.kind, recorded: outcome.recorded }, 'feedback received');
    }
  }

  const server = new SMTPServer({
    name: bounceDomain,
    banner: 'Pigeon inbound receiver',
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    size: settings.maxBytes,
    maxClients: settings.maxClients,
    socketTimeout: 60_000,
    onMailFrom(_address, session, callback) {
      if (!allow(session.remoteAddress)) return callback(refuse(session, 421, '4.7.0 Too many messages, slow down'));
      routed.delete(session.id); // a new transaction on the same connection starts with no recipients
      callback();
    },
    onRcptTo(address, session, callback) {
      if (emailIdOf(address.address) || isDmarcAddress(address.address)) return callback();
      matchRecipient(deps.db.pool, address.address).then(
        (match) => {
          if (!match) return callback(refuse(session, 550, '5.1.1 No such recipient here', { rcpt: address.address }));
          const matches = routed.get(session.id) ?? new Map<string, RouteMatch>();
          routed.set(session.id, matches.set(match.address, match));
          callback();
        },
        (err: Error) => {
          logger.error({ err }, 'inbound route lookup failed');
          callback(smtpError(451, '4.3.0 Temporary failure, try again later'));
        },
      );
    },
    onClose(session) {
      routed.delete(session.id);
    },
    onData(stream: SMTPServerDataStream, session, callback) {
      readMessage(stream, settings.maxBytes).then((message) => {
        if (!message) return callback(refuse(session, 552, '5.3.4 Message too big'));
        handle(message, session).then(
          () => callback(),
          (err: Error & { responseCode?: number }) => {
            if (err.responseCode) return callback(err);
            logger.error({ err }, 'inbound feedback not recorded');
            callback(smtpError(451, '4.3.0 Temporary failure, try again later'));
          },
        );
      });
    },
  });
  server.on('error', (err) => logger.warn({ err }, 'inbound SMTP error'));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.port, settings.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.server.address() as { port: number }).port;
  logger.info({ port, bounceDomain }, 'inbound SMTP receiver listening');
  return { port, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
