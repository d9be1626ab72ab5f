import { SMTPServer } from 'smtp-server';

export interface ReceivedMessage {
  from: string;
  to: string[];
  raw: string;
  messageId: string | undefined;
}

export interface SmtpSink {
  url: string;
  port: number;
  messages: ReceivedMessage[];
  /** SMTP replies to give at the end of DATA, in order, before accepting normally again (e.g. 451, 550). */
  failNext(...codes: number[]): void;
  /** Answers `code` at the end of DATA to every message for `address` until set to null. */
  failFor(address: string, code: number | null): void;
  /** Refuses `address` with `code` at RCPT TO (the message may still go to the other recipients) until set to null. */
  refuseRcpt(address: string, code: number | null): void;
  /**
   * Defers every recipient of `domain` at RCPT TO with `code` and an enhanced status of 4.7.x (as a
   * mailbox provider slowing a sender down) until set to null.
   */
  deferDomain(domain: string, code: number | null): void;
  /** RCPT TO commands given for recipients of `domain`, accepted or not. */
  rcptCount(domain: string): number;
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMessage[]>;
  /** A relay outage: stops listening and drops open connections at once (connecting is then refused). */
  stop(): Promise<void>;
  /** Listens again on the same port after `stop`. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A real SMTP server on loopback that keeps every accepted message, raw. With `delayMs`, each
 * final reply to DATA waits that long; a message counts as received only if its connection was
 * still open to get that reply (as with a real MTA, a client gone before it delivered nothing).
 */
export async function startSmtpSink(opts: { delayMs?: number } = {}): Promise<SmtpSink> {
  const messages: ReceivedMessage[] = [];
  const failures: number[] = [];
  const failing = new Map<string, number>();
  const refusing = new Map<string, number>();
  const deferring = new Map<string, number>();
  const rcpts = new Map<string, number>();
  const closed = new Set<string>();
  const makeServer = () =>
    new SMTPServer({
      onClose(session) {
        closed.add(session.id);
      },
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      size: 60 * 1024 * 1024,
      onRcptTo(address, _session, callback) {
        const domain = (address.address.split('@')[1] ?? '').toLowerCase();
        rcpts.set(domain, (rcpts.get(domain) ?? 0) + 1);
        const deferral = deferring.get(domain);
        if (deferral) {
          const message = '4.7.28 Our system has detected an unusual rate of mail from you, try again later';
          return callback(Object.assign(new Error(message), { responseCode: deferral }));
        }
        const code = refusing.get(address.address);
        if (!code) return callback();
        callback(
          Object.assign(new Error(code >= 500 ? 'No such user here' : 'Try again later'), { responseCode: code }),
        );
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          const code = session.envelope.rcptTo.map((r) => failing.get(r.address)).find(Boolean) ?? failures.shift();
          if (code) {
            const err = Object.assign(new Error(code >= 500 ? 'Mailbox unavailable' : 'Try again later'), {
              responseCode: code,
            });
            return callback(err);
          }
          const raw = Buffer.concat(chunks).toString('utf8');
          const accept = () => {
            if (closed.has(session.id)) return;
            messages.push({
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              to: session.envelope.rcptTo.map((r) => r.address),
              raw,
              messageId: /^Message-ID:\s*(<[^>]+>)/im.exec(raw)?.[1],
            });
            callback();
          };
          if (opts.delayMs) setTimeout(accept, opts.delayMs);
          else accept();
        });
      },
    });
  let server = makeServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as { port: number }).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    messages,
    failNext: (...codes) => failures.push(...codes),
    failFor: (address, code) => (code ? failing.set(address, code) : failing.delete(address)),
    refuseRcpt: (address, code) => (code ? refusing.set(address, code) : refusing.delete(address)),
    deferDomain: (domain, code) =>
      code ? deferring.set(domain.toLowerCase(), code) : deferring.delete(domain.toLowerCase()),
    rcptCount: (domain) => rcpts.get(domain.toLowerCase()) ?? 0,
    async waitFor(count, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (messages.length < count) {
        if (Date.now() > deadline) throw new Error(`sink has ${messages.length} of ${count} messages`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return messages;
    },
    stop: () =>
      new Promise((resolve) => {
        (server as unknown as { options: { closeTimeout: number } }).options.closeTimeout = 1;
        server.close(() => resolve());
      }),
    // A closed SMTPServer greets with 421 from then on: a new one takes the port.
    restart: () => {
      server = makeServer();
      return new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
