// The same customer program without the SDK (fetch and hand-written interfaces): what TypeScript costs for a program of this size (never run).
interface Contact {
  id: string;
  email: string;
  subscribed: boolean;
  data: Record<string, unknown>;
  _meta: { isNew: boolean };
}
interface SendResult {
  emails: { email: string; contact: { id: string } }[];
  warnings?: { message: string }[];
}
interface Campaign {
  id: string;
  status: 'DRAFT' | 'SENDING' | 'SENT';
  sent: number;
}
class ApiError extends Error {
  constructor(
    public status: number,
    public code: string,
  ) {
    super(code);
  }
}
const base = 'https://pigeon.example.com';
async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: 'Bearer sk_live_x', 'content-type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = (await res.json()) as { error?: { code: string } } & T;
  if (!res.ok) throw new ApiError(res.status, json.error?.code ?? 'UNKNOWN');
  return json;
}
export async function onSignup(email: string, name: string): Promise<string> {
  const contact = await call<Contact>('POST', '/contacts', { email, subscribed: true, data: { name, plan: 'pro' } });
  const { emails, warnings } = await call<SendResult>('POST', '/v1/send', {
    to: { name, email },
    cc: ['team@acme.com'],
    template: 'tpl-welcome',
    data: { name },
  });
  for (const w of warnings ?? []) console.warn(w.message);
  await call('POST', '/v1/track', { email, event: 'signed-up', data: { source: 'web' } });
  const read = await call<Contact>('GET', `/contacts/${contact.id}`);
  const first = emails[0];
  const sent = first ? await call<{ status: string }>('GET', `/emails/${first.email}`) : undefined;
  return `${read.email} ${sent?.status} ${contact._meta.isNew}`;
}
export async function launch(): Promise<number> {
  const campaign = await call<Campaign>('POST', '/campaigns', {
    name: 'Launch',
    subject: 'Hi',
    body: '<p>Hi</p>',
    from: 'hello@acme.com',
    audienceType: 'ALL',
  });
  await call('POST', `/campaigns/${campaign.id}/send`);
  try {
    for (;;) {
      const c = await call<Campaign>('GET', `/campaigns/${campaign.id}`);
      if (c.status === 'SENT') return c.sent;
    }
  } catch (err) {
    if (err instanceof ApiError && err.code === 'TIMEOUT') return -1;
    throw err;
  }
}
export function onWebhook(raw: string): string {
  const event = JSON.parse(raw) as { type: string; data: { to?: string; bounceType?: string } };
  if (event.type === 'email.bounce' && event.data.bounceType) return `${event.data.to} ${event.data.bounceType}`;
  return event.type;
}
