import { expect, it } from 'vitest';
import { api } from '../../../test/api.js';
import { hrefs, parseMessage } from '../../../test/mail.js';
import { startMailingPigeon } from '../../../test/mailing-pigeon.js';
import { verifiedSender } from '../../../test/sending.js';
import { buildWorkflow, createTemplate, executionsOf, track, until } from '../../../test/workflows.js';

const { pigeon, sink, dns } = await startMailingPigeon({ CHANGE_FEED_POLL_MS: '20', WORKFLOW_POLL_MS: '50' });

const inbox = (to: string) => sink.messages.filter((m) => m.to.includes(to)).map((m) => parseMessage(m.raw));
const subjects = (to: string) => inbox(to).map((m) => m.headers.get('subject'));

/**
 * Spec §1's double opt-in, end to end: a contact created unsubscribed tracks `signup`; a workflow
 * sends a TRANSACTIONAL confirmation with {{subscribeUrl}} and waits for `contact.subscribed`
 * (a reminder on timeout); following the link records `contact.subscribed`, which starts the
 * welcome workflow.
 */
it('double opt-in: confirm by the link in the mail, welcome after; a reminder when nobody confirms', async () => {
  const s = await verifiedSender(pigeon, dns);
  const confirm = await createTemplate(pigeon, s.auth, {
    name: 'Confirm',
    subject: 'Please confirm your subscription',
    body: '<p>Hi! <a href="{{subscribeUrl}}">Yes, subscribe me</a></p>',
    from: s.from,
    type: 'TRANSACTIONAL',
  });
  const reminder = await createTemplate(pigeon, s.auth, {
    name: 'Reminder',
    subject: 'Still interested?',
    body: '<p><a href="{{subscribeUrl}}">Confirm</a></p>',
    from: s.from,
    type: 'TRANSACTIONAL',
  });
  const welcome = await createTemplate(pigeon, s.auth, {
    name: 'Welcome',
    subject: 'Welcome aboard',
    body: '<p>Glad you are here. <a href="{{unsubscribeUrl}}">Unsubscribe</a></p>',
    from: s.from,
    type: 'MARKETING',
  });
  const optIn = await buildWorkflow(pigeon, s.auth, {
    name: 'Double opt-in',
    trigger: 'signup',
    steps: [
      { key: 'confirm', type: 'SEND_EMAIL', config: { templateId: confirm } },
      { key: 'wait', type: 'WAIT_FOR_EVENT', config: { eventName: 'contact.subscribed', timeout: 2 } },
      { key: 'remind', type: 'SEND_EMAIL', config: { templateId: reminder } },
      { key: 'done', type: 'EXIT', config: { reason: 'confirmed' } },
    ],
    transitions: [
      ['confirm', 'wait'],
      ['wait', 'done', 'event'],
      ['wait', 'remind', 'timeout'],
    ],
  });
  const welcomeFlow = await buildWorkflow(pigeon, s.auth, {
    name: 'Welcome',
    trigger: 'contact.subscribed',
    steps: [{ key: 'welcome', type: 'SEND_EMAIL', config: { templateId: welcome } }],
    transitions: [],
  });

  const ada = `ada-${Date.now()}@example.com`;
  const bob = `bob-${Date.now()}@example.com`;
  for (const email of [ada, bob]) {
    const created = await api(pigeon, s.auth).contacts.create({ body: { email, subscribed: false } });
    expect(created.status).toBe(201);
    await track(pigeon, s.auth, email, 'signup');
  }

  // Ada confirms by following the link from the message she received.
  const [mail] = await until(
    () => inbox(ada),
    (m) => m.length > 0,
  );
  expect(mail?.headers.get('subject')).toBe('Please confirm your subscription');
  const link = hrefs(mail as NonNullable<typeof mail>).find((h) => h.includes('/subscribe/'));
  expect(link).toBeDefined();
  // The link opens a page; a scanner's GET confirms nothing, the button's POST does.
  const page = await fetch(link as string);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain('Yes, subscribe me');
  const confirmed = await fetch(link as string, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
    body: 'action=subscribe',
  });
  expect(confirmed.status).toBe(200);

  await until(
    () => subjects(ada),
    (s) => s.includes('Welcome aboard'),
  );
  const adaRuns = await until(
    () => executionsOf(pigeon, s.auth, optIn.id),
    (l) => l.some((e) => e.status === 'EXITED'),
  );
  expect(adaRuns.find((e) => e.status === 'EXITED')?.exitReason).toBe('confirmed');

  // Bob never confirms: the wait times out and he gets the reminder, never the welcome.
  await until(
    () => subjects(bob),
    (s) => s.includes('Still interested?'),
  );
  const all = await until(
    () => executionsOf(pigeon, s.auth, optIn.id),
    (l) => l.length === 2 && l.every((e) => e.status === 'EXITED' || e.status === 'COMPLETED'),
  );
  expect(all.map((e) => e.status).sort()).toEqual(['COMPLETED', 'EXITED']);
  expect(subjects(ada)).toEqual(['Please confirm your subscription', 'Welcome aboard']);
  expect(subjects(bob)).toEqual(['Please confirm your subscription', 'Still interested?']);
  expect(await executionsOf(pigeon, s.auth, welcomeFlow.id)).toHaveLength(1);
}, 60_000);
