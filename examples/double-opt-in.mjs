// Double opt-in (spec §1) with two workflows:
//   1. on `signup`: send a TRANSACTIONAL confirmation with {{subscribeUrl}}, wait for
//      `contact.subscribed` (up to REMIND_AFTER seconds), and send a reminder if it does not come;
//   2. on `contact.subscribed`: send the welcome (MARKETING).
//
//   PIGEON_URL=http://localhost:3000 PIGEON_SECRET_KEY=sk_… node examples/double-opt-in.mjs ada@example.com
//
// On Pigeon's embedded defaults the local outbox verifies the sender domain at once and keeps the
// mail: open http://localhost:3000/outbox, open the confirmation and follow its link. The script sets
// the workflows up once (found again by name on the next run) and signs the address up.
import { Pigeon, PigeonError } from '@pigeon/sdk';

const baseUrl = process.env.PIGEON_URL ?? 'http://localhost:3000';
const apiKey = process.env.PIGEON_SECRET_KEY;
const email = process.argv[2];
const domain = process.env.SENDER_DOMAIN ?? 'news.example.com';
const remindAfter = Number(process.env.REMIND_AFTER ?? 24 * 3600);
if (!apiKey || !email) {
  console.error('Usage: PIGEON_SECRET_KEY=sk_… node examples/double-opt-in.mjs <email>  (keys: .pigeon/first-run.txt)');
  process.exit(2);
}
const pigeon = new Pigeon({ apiKey, baseUrl });
const from = `hello@${domain}`;

async function ensureSender() {
  try {
    const created = await pigeon.domains.create(domain);
    console.log(`sender domain ${domain}: ${created.status}`);
  } catch (err) {
    if (!(err instanceof PigeonError && err.status === 409)) throw err; // already added
  }
}

const template = (name, subject, body, type) => pigeon.templates.create({ name, subject, body, from, type });

/** Builds a workflow from steps and [from, to, branch?] transitions, then enables it. */
async function workflow(name, eventName, steps, transitions) {
  const created = await pigeon.workflows.create({ name, triggerConfig: { eventName } });
  const ids = {};
  for (const [key, step] of Object.entries(steps)) {
    ids[key] = (await pigeon.workflows.steps.add(created.id, { name: key, ...step })).id;
  }
  for (const [fromKey, toKey, branch] of transitions) {
    await pigeon.workflows.transitions.add(created.id, { fromStepId: ids[fromKey], toStepId: ids[toKey], branch });
  }
  return pigeon.workflows.enable(created.id);
}

async function setUp() {
  const existing = await pigeon.workflows.list();
  if (existing.some((w) => w.name === 'Double opt-in')) return;
  await ensureSender();
  const confirm = await template(
    'Confirm subscription',
    'Please confirm your subscription',
    '<p>Hi! Open the link and press the button to confirm: <a href="{{subscribeUrl}}">Confirm my subscription</a></p>',
    'TRANSACTIONAL',
  );
  const reminder = await template(
    'Confirm reminder',
    'Still interested?',
    '<p>You have not confirmed yet. <a href="{{subscribeUrl}}">Confirm</a></p>',
    'TRANSACTIONAL',
  );
  const welcome = await template(
    'Welcome',
    'Welcome aboard',
    '<p>Glad you are here. <a href="{{unsubscribeUrl}}">Unsubscribe</a></p>',
    'MARKETING',
  );
  await workflow(
    'Double opt-in',
    'signup',
    {
      confirm: { type: 'SEND_EMAIL', config: { templateId: confirm.id } },
      wait: { type: 'WAIT_FOR_EVENT', config: { eventName: 'contact.subscribed', timeout: remindAfter } },
      remind: { type: 'SEND_EMAIL', config: { templateId: reminder.id } },
      confirmed: { type: 'EXIT', config: { reason: 'confirmed' } },
    },
    [
      ['confirm', 'wait'],
      ['wait', 'confirmed', 'event'],
      ['wait', 'remind', 'timeout'],
    ],
  );
  await workflow(
    'Welcome',
    'contact.subscribed',
    { welcome: { type: 'SEND_EMAIL', config: { templateId: welcome.id } } },
    [],
  );
  console.log('workflows "Double opt-in" and "Welcome" are enabled');
}

await setUp();
// Not subscribed until the button on the confirmation link's page is pressed (opening the link alone changes nothing).
await pigeon.contacts.create({ email, subscribed: false });
await pigeon.events.track({ email, event: 'signup' });
console.log(`${email} signed up: a confirmation is on its way (see ${baseUrl}/outbox on the local outbox)`);
