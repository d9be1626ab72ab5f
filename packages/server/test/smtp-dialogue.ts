import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls, type TLSSocket } from 'node:tls';

export interface SmtpAnswer {
  code: number;
  /** Every line of the reply without its code, joined by newlines. */
  text: string;
}

export interface SmtpDialogue {
  greeting: SmtpAnswer;
  /** Sends one command line (CRLF added) and reads the whole reply. */
  say(line: string): Promise<SmtpAnswer>;
  /** After a 354: sends the message (dot-stuffed, terminated) and reads the reply. */
  message(text: string | Buffer): Promise<SmtpAnswer>;
  /** Sends bytes as they are and reads the next reply. */
  raw(bytes: string | Buffer): Promise<SmtpAnswer>;
  /** STARTTLS, then the rest of the dialogue goes over TLS. */
  starttls(): Promise<SmtpAnswer>;
  /** The connection was closed by the server. */
  closed(): boolean;
  close(): void;
}

/**
 * A line-by-line SMTP client for tests of exact replies (codes and text), including ones real
 * clients would never send: garbage, a thousand recipients, AUTH before STARTTLS. `localAddress`
 * picks the loopback source address (127.0.0.x), so a test of per-address limits has its own.
 */
export async function openDialogue(
  port: number,
  opts: { tls?: boolean; localAddress?: string } = {},
): Promise<SmtpDialogue> {
  let socket: Socket | TLSSocket = await open(port, opts);
  let buffer = '';
  let ended = false;
  let waiting: (() => void) | undefined;
  const listen = (s: Socket | TLSSocket) => {
    s.setEncoding('latin1');
    s.on('data', (chunk: string) => {
      buffer += chunk;
      waiting?.();
    });
    s.on('close', () => {
      ended = true;
      waiting?.();
    });
    s.on('error', () => {});
  };
  listen(socket);

  const reply = async (): Promise<SmtpAnswer> => {
    for (;;) {
      const lines = buffer.split('\r\n');
      const last = lines.findIndex((l) => /^\d{3}( |$)/.test(l));
      if (last !== -1) {
        const taken = lines.slice(0, last + 1);
        buffer = lines.slice(last + 1).join('\r\n');
        return { code: Number(taken[last]?.slice(0, 3)), text: taken.map((l) => l.slice(4)).join('\n') };
      }
      if (ended) return { code: 0, text: 'connection closed' };
      await new Promise<void>((resolve) => {
        waiting = resolve;
      });
      waiting = undefined;
    }
  };
  const write = (bytes: string | Buffer) => {
    if (!ended) socket.write(bytes);
  };
  const greeting = await reply();
  return {
    greeting,
    say: (line) => {
      write(`${line}\r\n`);
      return reply();
    },
    message: (text) => {
      const body = Buffer.isBuffer(text) ? text.toString('latin1') : text;
      write(Buffer.from(`${body.replace(/\r?\n/g, '\r\n').replace(/^\./gm, '..')}\r\n.\r\n`, 'latin1'));
      return reply();
    },
    raw: (bytes) => {
      write(bytes);
      return reply();
    },
    async starttls() {
      write('STARTTLS\r\n');
      const answer = await reply();
      if (answer.code !== 220) return answer;
      socket.removeAllListeners('data');
      socket = await new Promise<TLSSocket>((resolve, reject) => {
        const secure = connectTls({ socket, rejectUnauthorized: false }, () => resolve(secure));
        secure.once('error', reject);
      });
      listen(socket);
      return answer;
    },
    closed: () => ended,
    close: () => socket.destroy(),
  };
}

function open(port: number, opts: { tls?: boolean; localAddress?: string }): Promise<Socket | TLSSocket> {
  const where = { host: '127.0.0.1', port, localAddress: opts.localAddress };
  return new Promise((resolve, reject) => {
    const socket = opts.tls
      ? connectTls({ ...where, rejectUnauthorized: false }, () => resolve(socket))
      : connectTcp(where, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** `AUTH PLAIN` with a username and a password (a project's key). */
export const authPlain = (password: string, username = 'pigeon') =>
  `AUTH PLAIN ${Buffer.from(`\0${username}\0${password}`).toString('base64')}`;
