// A customer's program using @pigeon/sdk, type-checked by bench/sdk-typecheck.mjs (never run).
import { Pigeon, PigeonError, type SendBody, type WebhookEvent, webhooks } from '@pigeon/sdk';

const pigeon = new Pigeon({ apiKey: 'sk_live_x', baseUrl: 'https://pigeon.example.com' });

export async function onSignup(email: string, name: string): Promise<string> {
  const contact = await pigeon.contacts.create({ email, subscribed: true, data: { name, plan: 'pro' } });
  const body: SendBody = { to: { name, email }, cc: ['team@acme.com'], template: 'tpl-welcome', data: { name } };
  const { emails, warnings } = await pigeon.emails.send(body);
  for (const w of warnings ?? []) console.warn(w.message);
  await pigeon.events.track({ email, event: 'signed-up', data: { source: 'web' } });
  const read = await pigeon.contacts.get(contact.id);
  const first = emails[0];
  const sent = first ? await pigeon.emails.get(first.email) : undefined;
  return `${read.email} ${sent?.status} ${contact._meta.isNew}`;
}

export async function launch(): Promise<number> {
  const campaign = await pigeon.campaigns.create({
    name: 'Launch',
    subject: 'Hi',
    body: '<p>Hi</p>',
    from: 'hello@acme.com',
    audienceType: 'ALL',
  });
  await pigeon.campaigns.send(campaign.id);
  try {
    const done = await pigeon.campaigns.waitForSent(campaign.id, { onProgress: (p) => console.log(p.sent, p.pending) });
    return done.sent;
  } catch (err) {
    if (err instanceof PigeonError && err.code === 'TIMEOUT') return -1;
    if (err instanceof PigeonError) console.error(err.status, err.code, err.errors?.[0]?.field, err.requestId);
    throw err;
  }
}

export async function onWebhook(raw: string, headers: Record<string, string>): Promise<string> {
  const event: WebhookEvent = await webhooks.verify(raw, headers, 'whsec_x');
  // Custom events have any name (`type: string`), so a type test alone cannot narrow: test the data too.
  if (event.type === 'email.bounce' && 'bounceType' in event.data) return `${event.data.to} ${event.data.bounceType}`;
  if ('segment' in event.data) return `${event.data.contact.email} ${event.data.segment.slug}`;
  return event.type;
}
