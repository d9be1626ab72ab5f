import { MAX_RECIPIENTS, Mailbox } from '@pigeon/contract';
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import type { AppDeps } from '../../deps.js';
import type { Logger } from '../../logger.js';
import { readMessage } from '../../mail/smtp-data.js';
import { smtpSubmissionAuthFailures, smtpSubmissions } from '../../metrics/registry.js';
import {
  admitTransaction,
  authFailureGuard,
  BAD_CREDENTIALS,
  checkCredentials,
  isLoopback,
  type SubmissionUser,
} from './auth.js';
import { submissionTls } from './certificate.js';
import { readSubmission } from './message.js';
import { replyOfSendError, SmtpReply, TEMPORARY_FAILURE } from './replies.js';
import { type Accepted, submitOnce } from './submit.js';

export interface SmtpSubmission {
  /** The STARTTLS listener's port, when it runs. */
  port: number | undefined;
  /** The implicit-TLS listener's port, when it runs. */
  tlsPort: number | undefined;
  stop(): Promise<void>;
}

/**
 * SMTP submission (`SMTP_SUBMISSION_PORT` with STARTTLS, `SMTP_SUBMISSION_TLS_PORT` with implicit
 * TLS; both off by default), in the API process beside the HTTP listener: another way into
 * `POST /v1/send`'s path for programs that speak SMTP. AUTH PLAIN or LOGIN only over TLS (or from
 * loopback with `SMTP_SUBMISSION_ALLOW_PLAIN_AUTH`), any username, a project's secret key as the
 * password; without AUTH nothing is accepted, so nothing is ever relayed. Each transaction counts
 * against the project's rate limit at MAIL FROM; each message is read (`message.ts`) and sent
 * through `sendEmail` once per Message-ID (`submit.ts`).
 */
export async function startSmtpSubmission(deps: AppDeps): Promise<SmtpSubmission | undefined> {
  const settings = deps.config.smtpSubmission;
  if (settings.port === undefined && settings.tlsPort === undefined) return undefined;
  const logger = deps.logger.child({ component: 'smtp-submission' });
  const tls = submissionTls(settings);
  if (tls.generated) {
    logger.warn(
      { certFile: tls.certFile, hostname: settings.hostname },
      'SMTP submission uses a self-signed certificate generated into the data dir: clients must be told to trust it (set SMTP_SUBMISSION_TLS_CERT and SMTP_SUBMISSION_TLS_KEY for a real one)',
    );
  }
  const options = serverOptions(deps, logger, { key: tls.key, cert: tls.cert });
  const plain =
    settings.port === undefined ? undefined : await listen(new SMTPServer(options), settings.port, settings.host);
  const secure =
    settings.tlsPort === undefined
      ? undefined
      : await listen(new SMTPServer({ ...options, secure: true }), settings.tlsPort, settings.host);
  const running = [plain, secure].filter((s) => s !== undefined);
  for (const s of running) s.server.on('error', (err) => logger.warn({ err }, 'SMTP submission error'));
  const port = plain?.port;
  const tlsPort = secure?.port;
  logger.info({ port, tlsPort, host: settings.host }, 'SMTP submission listening');
  return {
    port,
    tlsPort,
    stop: async () => {
      await Promise.all(running.map((s) => new Promise<void>((resolve) => s.server.close(() => resolve()))));
    },
  };
}

type Session = SMTPServerSession & { user?: SubmissionUser };

function serverOptions(deps: AppDeps, logger: Logger, tls: { key: Buffer; cert: Buffer }): SMTPServerOptions {
  const settings = deps.config.smtpSubmission;
  const guard = authFailureGuard(settings.authFailuresPerIp);
  const refuse = (session: Session, err: SmtpReply, extra: Record<string, unknown> = {}) => {
    logger.info({ remoteAddress: session.remoteAddress, code: err.responseCode, ...extra }, err.message);
    return err;
  };

  return {
    name: settings.hostname,
    banner: 'Pigeon SMTP submission',
    key: tls.key,
    cert: tls.cert,
    authMethods: ['PLAIN', 'LOGIN'],
    // With plain AUTH allowed, the loopback check is ours (onAuth): smtp-server's flag is all or nothing.
    allowInsecureAuth: settings.allowPlainAuth,
    authRequiredMessage: '5.7.0 Authentication required: AUTH with a secret key of your project, after STARTTLS',
    size: settings.maxBytes,
    maxClients: settings.maxClients,
    socketTimeout: 60_000,
    logger: false,

    onAuth(auth, session: Session, callback) {
      const address = session.remoteAddress;
      if (!session.secure && !(settings.allowPlainAuth && isLoopback(address))) {
        return callback(refuse(session, new SmtpReply(538, '5.7.11 Encryption required: STARTTLS first')));
      }
      if (guard.blocked(address)) {
        smtpSubmissionAuthFailures.inc({ reason: 'throttled' });
        const err = new SmtpReply(454, '4.7.0 Too many failed authentications from your address; try again later');
        return callback(refuse(session, err));
      }
      checkCredentials(deps, auth.password ?? '').then(
        (user) => {
          if (user) return callback(null, { user });
          guard.failed(address);
          smtpSubmissionAuthFailures.inc({ reason: 'credentials' });
          callback(refuse(session, BAD_CREDENTIALS(), { username: auth.username?.slice(0, 100) }));
        },
        (err) => {
          logger.error({ err }, 'SMTP AUTH could not be checked');
          callback(new SmtpReply(454, '4.7.0 Temporary authentication failure, try again later'));
        },
      );
    },

    onMailFrom(_address, session: Session, callback) {
      const user = session.user as SubmissionUser;
      admitTransaction(deps, user).then(
        () => callback(),
        (err) => callback(replyOf(err, session)),
      );
    },

    onRcptTo(address, session: Session, callback) {
      if (session.envelope.rcptTo.length >= MAX_RECIPIENTS) {
        const err = new SmtpReply(
          452,
          `4.5.3 Too many recipients: at most ${MAX_RECIPIENTS} per message, send the rest in another`,
        );
        return callback(err);
      }
      if (!Mailbox.safeParse(address.address).success) {
        return callback(new SmtpReply(553, '5.1.3 Not a valid recipient address'));
      }
      callback();
    },

    onData(stream, session: Session, callback) {
      readMessage(stream, settings.maxBytes).then((message) => {
        if (!message) {
          smtpSubmissions.inc({ outcome: 'refused' });
          return callback(
            refuse(session, new SmtpReply(552, `5.3.4 Message too big: at most ${settings.maxBytes} bytes`)),
          );
        }
        const user = session.user as SubmissionUser;
        const recipients = [...new Set(session.envelope.rcptTo.map((r) => r.address.toLowerCase()))];
        Promise.resolve()
          .then(() => submitOnce(deps, user.projectId, readSubmission(message, recipients)))
          .then(
            (accepted) => {
              smtpSubmissions.inc({ outcome: accepted.repeated ? 'repeated' : 'accepted' });
              callback(null, acceptedReply(accepted));
            },
            (err) => callback(replyOf(err, session)),
          );
      });
    },
  };

  /** A refusal as the client reads it; a fault of ours is logged and answered 451 (retry). */
  function replyOf(err: unknown, session: Session): SmtpReply {
    const reply = replyOfSendError(err);
    if (reply) {
      smtpSubmissions.inc({ outcome: 'refused' });
      return refuse(session, reply);
    }
    smtpSubmissions.inc({ outcome: 'failed' });
    logger.error({ err, remoteAddress: session.remoteAddress }, 'SMTP submission failed');
    return TEMPORARY_FAILURE();
  }
}

/** The 250 after DATA: Postfix's "queued as", with the first email's id, and any recipient not sent to. */
function acceptedReply({ emails, skipped, repeated }: Accepted): string {
  const what = emails.length ? `${repeated ? 'already accepted' : 'queued'} as ${emails[0]}` : 'nothing queued';
  const more = emails.length > 1 ? ` and ${emails.length - 1} more` : '';
  const notSent = skipped.length
    ? `; not sent to ${skipped.slice(0, 3).join(', ')}${skipped.length > 3 ? ' …' : ''}`
    : '';
  return `2.0.0 Ok: ${what}${more}${notSent}`;
}

function listen(server: SMTPServer, port: number, host: string): Promise<{ server: SMTPServer; port: number }> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve({ server, port: (server.server.address() as { port: number }).port });
    });
  });
}
