// A small HTTP server that receives Pigeon's event webhooks and verifies each one (Standard
// Webhooks signature and timestamp) before trusting it.
//
//   PIGEON_URL=http://localhost:3000 PIGEON_SECRET_KEY=sk_… PORT=4000 node examples/webhook-receiver.mjs
//
// With WEBHOOK_SECRET set it only listens (the endpoint exists already). Without it, it registers
// itself as an endpoint (`RECEIVER_URL`, default http://127.0.0.1:<port>/webhooks) for every
// event and uses the secret Pigeon answers. A loopback URL needs WEBHOOK_ALLOW_PRIVATE_NETWORKS=true
// on the Pigeon server (the SSRF guard refuses it otherwise).
import { createServer } from 'node:http';
import { Pigeon, WebhookVerificationError, webhooks } from '@pigeon/sdk';

const port = Number(process.env.PORT ?? 4000);
/** webhook-ids already handled: a retry or a replay carries the same id (keep these in your database). */
const seen = new Set();
let secret = process.env.WEBHOOK_SECRET;

const server = createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/webhooks') {
    res.writeHead(404).end();
    return;
  }
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', async () => {
    const rawBody = Buffer.concat(chunks); // the bytes as sent: never re-serialised JSON
    try {
      const event = await webhooks.verify(rawBody, req.headers, secret);
      const id = req.headers['webhook-id'];
      if (!seen.has(id)) {
        seen.add(id);
        handle(event);
      }
      res.writeHead(204).end(); // answer fast; do slow work elsewhere
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      console.log(`refused: ${err.reason}`);
      res.writeHead(400, { 'content-type': 'text/plain' }).end(err.reason);
    }
  });
});

/** The typed event: switch on `type`. */
function handle(event) {
  switch (event.type) {
    case 'email.bounce':
      console.log(`email.bounce ${event.data.to} (${event.data.bounceType}: ${event.data.reason})`);
      break;
    case 'email.click':
      console.log(`email.click ${event.data.to} ${event.data.link}`);
      break;
    case 'webhook.test':
      console.log(`webhook.test ${event.data.endpointId}`);
      break;
    default:
      console.log(`${event.type} ${event.data.contact?.email ?? ''}`.trim());
  }
}

server.listen(port, '127.0.0.1', async () => {
  const { port: bound } = server.address();
  console.log(`listening on http://127.0.0.1:${bound}/webhooks`);
  if (secret) return;
  const apiKey = process.env.PIGEON_SECRET_KEY;
  if (!apiKey) {
    console.error('Set WEBHOOK_SECRET, or PIGEON_SECRET_KEY to register this receiver.');
    process.exit(2);
  }
  const pigeon = new Pigeon({ apiKey, baseUrl: process.env.PIGEON_URL ?? 'http://localhost:3000' });
  const endpoint = await pigeon.webhooks.endpoints.create({
    url: process.env.RECEIVER_URL ?? `http://127.0.0.1:${bound}/webhooks`,
    description: 'examples/webhook-receiver.mjs',
    eventTypes: ['*'],
  });
  secret = endpoint.secret;
  console.log(`registered endpoint ${endpoint.id}`);
});

process.on('SIGTERM', () => server.close(() => process.exit(0)));
