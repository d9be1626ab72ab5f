import net from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coalesceWrites, connectCoalescedRelay } from './coalesced-socket.js';
import { createMailTransport } from './transport.js';

/** A loopback server that keeps what each connection sends. */
let server: net.Server;
let port: number;
const received: string[] = [];
const connections = new Set<net.Socket>();

beforeAll(async () => {
  server = net.createServer((conn) => {
    connections.add(conn);
    const index = received.push('') - 1;
    conn.on('data', (chunk) => {
      received[index] += chunk.toString();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as net.AddressInfo).port;
});

afterAll(async () => {
  // A failed test leaves its client open: close the server's ends so the server can close.
  for (const conn of connections) conn.destroy();
  await new Promise((resolve) => server.close(resolve));
});

/** Waits until the server has taken connection number `index` (the client's 'connect' may come first). */
const accepted = async (index: number) => {
  for (let i = 0; i < 200 && received.length <= index; i++) await new Promise((r) => setTimeout(r, 5));
  expect(received.length).toBeGreaterThan(index);
};
/** A coalescing client connected to the server, and the index of what the server receives from it. */
async function openCoalesced() {
  const index = received.length;
  const socket = coalesceWrites(net.connect(port, '127.0.0.1'));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  await accepted(index);
  return { socket, index };
}
const receivedAll = async (index: number, text: string) => {
  for (let i = 0; i < 200 && received[index] !== text; i++) await new Promise((r) => setTimeout(r, 10));
  expect(received[index]).toBe(text);
};

/** Counts the calls of the socket's single-chunk and many-chunk writes (Node's Writable implementation hooks). */
function countWrites(socket: net.Socket) {
  const counts = { single: 0, vectored: [] as number[] };
  const hooks = socket as unknown as {
    _write: (...args: unknown[]) => void;
    _writev: (chunks: unknown[], ...rest: unknown[]) => void;
  };
  const single = hooks._write.bind(socket);
  const vectored = hooks._writev.bind(socket);
  hooks._write = (...args) => {
    counts.single++;
    single(...args);
  };
  hooks._writev = (chunks, ...rest) => {
    counts.vectored.push(chunks.length);
    vectored(chunks, ...rest);
  };
  return counts;
}

describe('coalesceWrites', () => {
  it('sends the writes of one tick in one vectored write, and a lone later write as it is', async () => {
    const { socket, index } = await openCoalesced();
    const counts = countWrites(socket);
    socket.write('MAIL FROM:<a@example.com>\r\n');
    socket.write('RCPT TO:<b@example.com>\r\n');
    socket.write('DATA\r\n');
    await receivedAll(index, 'MAIL FROM:<a@example.com>\r\nRCPT TO:<b@example.com>\r\nDATA\r\n');
    expect(counts).toEqual({ single: 0, vectored: [3] });

    socket.write('QUIT\r\n');
    await receivedAll(index, 'MAIL FROM:<a@example.com>\r\nRCPT TO:<b@example.com>\r\nDATA\r\nQUIT\r\n');
    expect(counts).toEqual({ single: 1, vectored: [3] });
    socket.destroy();
  });

  it('leaves a cork of the caller’s own in place until the caller lifts it', async () => {
    const { socket, index } = await openCoalesced();
    const counts = countWrites(socket);
    socket.cork();
    socket.write('one\r\n');
    await new Promise((r) => setTimeout(r, 20));
    expect(received[index]).toBe('');
    socket.write('two\r\n');
    socket.uncork();
    await receivedAll(index, 'one\r\ntwo\r\n');
    expect(counts).toEqual({ single: 0, vectored: [2] });
    socket.destroy();
  });
});

describe('connectCoalescedRelay', () => {
  const connect = (options: Parameters<typeof connectCoalescedRelay>[0]) =>
    new Promise<{ err: Error | null; socket?: { connection: net.Socket } | false }>((resolve) =>
      connectCoalescedRelay(options, (err, socket) => resolve({ err, socket })),
    );

  it('hands nodemailer a connected socket whose writes are coalesced', async () => {
    const index = received.length;
    const { err, socket } = await connect({ host: '127.0.0.1', port });
    expect(err).toBeNull();
    if (!socket) throw new Error('no socket');
    await accepted(index);
    const counts = countWrites(socket.connection);
    socket.connection.write('EHLO a\r\n');
    socket.connection.write('NOOP\r\n');
    await receivedAll(index, 'EHLO a\r\nNOOP\r\n');
    expect(counts).toEqual({ single: 0, vectored: [2] });
    socket.connection.destroy();
  });

  it('leaves an implicit-TLS relay to nodemailer', async () => {
    expect(await connect({ host: '127.0.0.1', port, secure: true })).toEqual({ err: null, socket: false });
  });

  it('fails with Node’s code when nothing listens, so the failure is the transport’s', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const freePort = (closed.address() as net.AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const { err } = await connect({ host: '127.0.0.1', port: freePort });
    expect((err as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
  });
});

describe('the SMTP transport over a coalesced connection', () => {
  it('delivers through a relay that offers STARTTLS, over TLS', async () => {
    // smtp-server's own self-signed certificate: hence tls.rejectUnauthorized=false in the URL.
    const got: Array<{ secure: boolean; data: string }> = [];
    const relay = new SMTPServer({
      authOptional: true,
      onData(stream, session, done) {
        let data = '';
        stream.on('data', (chunk: Buffer) => {
          data += chunk.toString();
        });
        stream.on('end', () => {
          got.push({ secure: session.secure, data });
          done();
        });
      },
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const relayPort = (relay.server.address() as net.AddressInfo).port;
    const transport = createMailTransport({
      smtpUrl: `smtp://127.0.0.1:${relayPort}?tls.rejectUnauthorized=false`,
      outboxDir: '/nonexistent',
    });
    try {
      const sent = await transport.send({
        from: 'a@example.com',
        to: 'b@example.com',
        subject: 'Over TLS',
        text: 'Hello over STARTTLS',
      });
      expect(sent.refused).toBeUndefined();
      expect(got).toHaveLength(1);
      expect(got[0]?.secure).toBe(true);
      expect(got[0]?.data).toContain('Subject: Over TLS');
      expect(got[0]?.data).toContain('Hello over STARTTLS');
    } finally {
      transport.close();
      await new Promise<void>((resolve) => relay.close(() => resolve()));
    }
  });
});
