// Quickstart: send a first email, track an event from "the browser" with the public key, then
// look the contact up, import a few more from CSV and list them with the secret key.
//
//   PIGEON_URL=http://localhost:3000 PIGEON_PUBLIC_KEY=pk_… PIGEON_SECRET_KEY=sk_… node examples/quickstart.mjs
//
// The keys of the first project are printed when Pigeon first starts (and kept in first-run.txt in its
// data directory: PIGEON_DATA_DIR, `.pigeon` by default).
import { createPigeon, Pigeon, PigeonError } from '@pigeon/sdk';

const baseUrl = process.env.PIGEON_URL ?? 'http://localhost:3000';
const firstRun = `${(process.env.PIGEON_DATA_DIR ?? '.pigeon').replace(/\/+$/, '')}/first-run.txt`;
const publicKey = process.env.PIGEON_PUBLIC_KEY;
const secretKey = process.env.PIGEON_SECRET_KEY;
if (!publicKey || !secretKey) {
  console.error(`Set PIGEON_PUBLIC_KEY and PIGEON_SECRET_KEY (see ${firstRun}).`);
  process.exit(2);
}

// Send a first email. On the local outbox a sender domain is verified as soon as it is added: the first
// project already has pigeon.local (PIGEON_FROM picks another sender); add it when the project lacks it.
const server = new Pigeon({ apiKey: secretKey, baseUrl });
const from = process.env.PIGEON_FROM ?? 'hello@pigeon.local';
const email = {
  to: 'you@example.com',
  from,
  subject: 'Hello from Pigeon',
  body: '# It works\n\nSent by the quickstart.',
  type: 'markdown',
};
const sent = await server.emails.send(email).catch(async (err) => {
  if (!(err instanceof PigeonError) || err.details?.reason !== 'DOMAIN_NOT_VERIFIED') throw err;
  const domain = await server.domains.create(from.split('@')[1]);
  console.log(`added sender domain ${domain.domain} (${domain.status})`);
  return server.emails.send(email);
});
console.log(`sent email ${sent.emails[0].email} from ${from}`);
console.log(`see it at ${baseUrl}/outbox (sign in with the owner login in ${firstRun})`);

// Browser-side code gets a client that can only track.
const browser = createPigeon({ apiKey: publicKey, baseUrl });
const { contact } = await browser.events.track({ email: 'ada@example.com', event: 'signed-up', data: { plan: 'pro' } });
console.log(`tracked signed-up for contact ${contact}`);

// Server-side code uses the secret key.
const pigeon = server;
const ada = await pigeon.contacts.get(contact);
console.log(`ada: subscribed=${ada.subscribed} plan=${ada.data.plan}`);

const csv = 'email,plan\ngrace@example.com,team\nlinus@example.com,free\n';
const { jobId } = await pigeon.contacts.import(new TextEncoder().encode(csv));
const job = await pigeon.contacts.waitForJob(jobId, { kind: 'import', intervalMs: 100 });
console.log(`import ${job.status}: ${job.created} created, ${job.updated} updated, ${job.skipped} skipped`);

let count = 0;
for await (const c of pigeon.contacts.all({ limit: 50 })) {
  count++;
  console.log(`- ${c.email}`);
}
console.log(`${count} contacts`);

try {
  await pigeon.events.track({ email: 'ada@example.com', event: 'email.sent' });
} catch (err) {
  if (!(err instanceof PigeonError)) throw err;
  console.log(`reserved names are refused: ${err.status} ${err.code} (${err.errors?.[0]?.code})`);
}
