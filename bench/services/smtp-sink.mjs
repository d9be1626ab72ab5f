// The SMTP sink of the sending scenarios: a real `smtp-server` (from packages/server) on loopback
// that accepts everything and keeps, per message, its Message-ID, the time the end of DATA
// arrived, its size and whether it carries a DKIM-Signature header. It runs in its own process
// (started by the harness, see lib/sending.mjs), so its CPU is not Pigeon's and it does not
// compete in Pigeon's event loop. A small HTTP control server next to it answers
//   GET /stats     counts, bytes, first and last receipt (epoch ms), connections, connection errors
//   GET /messages  [[messageId, receivedAtMs, bytes, dkim 0|1, envelope recipients], …] in arrival order
//   POST /reset    forget everything received so far
// Prints `smtp-sink listening on http://127.0.0.1:<control port> smtp://127.0.0.1:<smtp port>`.
import { createServer } from 'node:http';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../packages/server/package.json', import.meta.url));
const { SMTPServer } = require('smtp-server');

/** Wall-clock milliseconds with sub-ms precision (comparable with PostgreSQL's now() on this machine). */
const now = () => performance.timeOrigin + performance.now();
const HEAD_LIMIT = 64 * 1024;

let messages = [];
let bytes = 0;
let connections = 0;
let withDkim = 0;
let errors = 0;
let lastError = null;

const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS', 'AUTH'],
  logger: false,
  onConnect(_session, callback) {
    connections++;
    callback();
  },
  onData(stream, session, callback) {
    let size = 0;
    let head = '';
    let headDone = false;
    stream.on('data', (chunk) => {
      size += chunk.length;
      if (headDone) return;
      head += chunk.toString('latin1');
      const end = head.search(/\r?\n\r?\n/);
      if (end >= 0) {
        head = head.slice(0, end);
        headDone = true;
      } else if (head.length > HEAD_LIMIT) headDone = true;
    });
    stream.on('end', () => {
      const at = now();
      const messageId = /^Message-ID:[ \t]*(<[^>\r\n]*>)/im.exec(head)?.[1] ?? null;
      const dkim = /^DKIM-Signature:/im.test(head);
      // RCPT TO addresses, comma-separated: per-recipient counts (campaign-100k) need no Message-ID lookup.
      const to = session.envelope.rcptTo.map((r) => r.address).join(',');
      messages.push([messageId, at, size, dkim ? 1 : 0, to]);
      bytes += size;
      if (dkim) withDkim++;
      callback();
    });
  },
});

// A client that dies mid-transaction (campaign-100k:kill SIGKILLs a Pigeon worker) resets its
// connection: smtp-server then emits 'error' on the server, which without a listener would crash
// the sink. Counted instead; that message was never accepted, so it is not recorded.
smtp.on('error', (err) => {
  errors++;
  lastError = `${err.code ?? ''} ${err.message}`.trim();
});

const stats = () => ({
  count: messages.length,
  bytes,
  withDkim,
  withoutMessageId: messages.reduce((n, m) => n + (m[0] === null ? 1 : 0), 0),
  firstAt: messages[0]?.[1] ?? null,
  lastAt: messages.at(-1)?.[1] ?? null,
  connections,
  errors,
  lastError,
});

const control = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    let body;
    if (req.method === 'GET' && req.url === '/stats') body = stats();
    else if (req.method === 'GET' && req.url === '/messages') body = { messages };
    else if (req.method === 'POST' && req.url === '/reset') {
      messages = [];
      bytes = 0;
      connections = 0;
      withDkim = 0;
      errors = 0;
      lastError = null;
      body = stats();
    } else {
      res.writeHead(404).end();
      return;
    }
    const json = JSON.stringify(body);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
    res.end(json);
  });
});

const listen = (server, listenFn) =>
  new Promise((resolve, reject) => {
    server.once('error', reject);
    listenFn(() => resolve(server.address().port));
  });
const smtpPort = await listen(smtp.server, (cb) => smtp.listen(0, '127.0.0.1', cb));
const controlPort = await listen(control, (cb) => control.listen(0, '127.0.0.1', cb));
console.log(`smtp-sink listening on http://127.0.0.1:${controlPort} smtp://127.0.0.1:${smtpPort}`);

const stop = () => {
  // Pigeon (the client) is stopped first; whatever is still connected is cut.
  setTimeout(() => process.exit(0), 2000).unref();
  control.closeAllConnections();
  control.close();
  smtp.close(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
