import { assert, beforeAll, describe, expect, it } from 'vitest';
import { newProject } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { expectEnvelope } from '../../../test/helpers.js';
import { hrefs, type ParsedMessage, parseMessage } from '../../../test/mail.js';
import { startMailingPigeon } from '../../../test/mailing-pigeon.js';
import { verifiedSender } from '../../../test/sending.js';
import { startTarget, type Target } from '../../../test/webhook-targets.js';
import { buildWorkflow, createTemplate, executionDetail, executionsOf, track, until } from '../../../test/workflows.js';
import { queryRows, sql } from '../../db/query.js';

const { pigeon, sink, dns } = await startMailingPigeon({
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOK_POLL_MS: '50',
  CHANGE_FEED_POLL_MS: '50',
});

type Auth = Record<string, string>;
type Sender = Awaited<ReturnType<typeof verifiedSender>>;

let counter = 0;
const address = (who: string) => `${who}-${process.pid}-${++counter}@example.com`;

async function createTopic(auth: Auth, body: Parameters<ReturnType<typeof api>['topics']['create']>[0]['body']) {
  const res = await api(pigeon, auth).topics.create({ body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return bodyOf(res, 201);
}

async function createContact(auth: Auth, email: string, subscribed = true) {
  const res = await api(pigeon, auth).contacts.create({ body: { email, subscribed } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return (res.body as { id: string }).id;
}

async function choose(auth: Auth, contactId: string, topics: Array<{ topicId: string; subscribed: boolean }>) {
  const res = await api(pigeon, auth).topics.setContactTopics({ params: { id: contactId }, body: { topics } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return bodyOf(res, 200).data;
}

async function topicStates(auth: Auth, contactId: string) {
  const res = await api(pigeon, auth).topics.contactTopics({ params: { id: contactId } });
  expect(res.status).toBe(200);
  return Object.fromEntries(bodyOf(res, 200).data.map((t) => [t.name, t.subscribed]));
}

const eventsOf = (contactId: string, prefix: string) =>
  queryRows<{ name: string; data: Record<string, unknown> }>(
    pigeon.deps.db.pool,
    sql`SELECT name, data FROM events WHERE contact_id = ${contactId}::uuid AND starts_with(name, ${prefix}) ORDER BY id`,
  );

const subscribedOf = async (contactId: string) =>
  (
    await queryRows<{ subscribed: boolean }>(
      pigeon.deps.db.pool,
      sql`SELECT subscribed FROM contacts WHERE id = ${contactId}::uuid`,
    )
  )[0]?.subscribed;

/** The messages the sink took for an address (a fresh address per contact, so nothing else matches). */
const mailTo = (email: string): ParsedMessage[] =>
  sink.messages.filter((m) => m.to.includes(email)).map((m) => parseMessage(m.raw));

/** Creates and sends a campaign to everyone, naming `topicId`; waits until it is SENT. */
async function sendCampaign(sender: Sender, topicId: string | null, body = '<p>News</p>') {
  const created = await api(pigeon, sender.auth).campaigns.create({
    body: { name: 'News', subject: 'News', body, from: sender.from, type: 'MARKETING', audienceType: 'ALL', topicId },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const campaign = bodyOf(created, 201).data;
  expect(campaign.topicId).toBe(topicId);
  const sent = await api(pigeon, sender.auth).campaigns.send({ params: { id: campaign.id }, body: {} });
  expect(sent.status, JSON.stringify(sent.body)).toBe(200);
  await until(
    async () => bodyOf(await api(pigeon, sender.auth).campaigns.get({ params: { id: campaign.id } }), 200).status,
    (s) => s === 'SENT',
  );
  return { id: campaign.id, totalRecipients: bodyOf(sent, 200).data.totalRecipients };
}

describe('topics: CRUD, validation, scope', () => {
  let auth: Auth;
  let other: Auth;
  beforeAll(async () => {
    auth = (await newProject(pigeon)).auth;
    other = (await newProject(pigeon)).auth;
  });

  it('creates, lists by name, gets, renames; a name is unique per project whatever its case', async () => {
    const news = await createTopic(auth, { name: 'Product news', defaultSubscription: 'OPT_IN' });
    expect(news).toMatchObject({ name: 'Product news', description: null, defaultSubscription: 'OPT_IN' });
    expect(news.visibility).toBe('PUBLIC');
    const offers = await createTopic(auth, {
      name: 'Offers',
      description: 'Discounts',
      defaultSubscription: 'OPT_OUT',
      visibility: 'HIDDEN',
    });
    const list = bodyOf(await api(pigeon, auth).topics.list(), 200).data;
    expect(list.map((t) => t.name)).toEqual(['Offers', 'Product news']);
    expect(bodyOf(await api(pigeon, auth).topics.get({ params: { id: offers.id } }), 200)).toEqual(offers);

    const same = await api(pigeon, auth).topics.create({
      body: { name: 'PRODUCT NEWS', defaultSubscription: 'OPT_IN' },
    });
    expectEnvelope(same, 409, 'CONFLICT');
    // Another project may use the name.
    await createTopic(other, { name: 'Product news', defaultSubscription: 'OPT_OUT' });

    const renamed = await api(pigeon, auth).topics.update({
      params: { id: news.id },
      body: { name: 'Releases', visibility: 'HIDDEN' },
    });
    expect(bodyOf(renamed, 200)).toMatchObject({
      name: 'Releases',
      visibility: 'HIDDEN',
      defaultSubscription: 'OPT_IN',
    });
    expectEnvelope(
      await api(pigeon, auth).topics.update({ params: { id: news.id }, body: { name: 'offers' } }),
      409,
      'CONFLICT',
    );
  });

  it('refuses a topic without a default subscription, an empty name or an unknown visibility (422)', async () => {
    const bad = [
      { name: 'No default' },
      { name: ' ', defaultSubscription: 'OPT_IN' },
      { name: 'Odd', defaultSubscription: 'OPT_IN', visibility: 'SECRET' },
      { name: 'Odd', defaultSubscription: 'SOMETIMES' },
    ];
    for (const body of bad) {
      // untyped: wrong on purpose (a body the contract's types refuse)
      expectEnvelope(await pigeon.request('POST', '/topics', { headers: auth, body }), 422, 'VALIDATION_ERROR');
    }
  });

  it("answers 404 for another project's topic and contact, 422 for another project's topic in a choice", async () => {
    const theirs = await createTopic(other, { name: 'Theirs', defaultSubscription: 'OPT_IN' });
    const mine = await createTopic(auth, { name: 'Mine', defaultSubscription: 'OPT_IN' });
    const theirContact = await createContact(other, address('their'));
    const myContact = await createContact(auth, address('mine'));
    const topics = api(pigeon, auth).topics;
    expectEnvelope(await topics.get({ params: { id: theirs.id } }), 404, 'NOT_FOUND');
    expectEnvelope(await topics.update({ params: { id: theirs.id }, body: { name: 'x' } }), 404, 'NOT_FOUND');
    expectEnvelope(await topics.delete({ params: { id: theirs.id } }), 404, 'NOT_FOUND');
    expectEnvelope(await topics.contactTopics({ params: { id: theirContact } }), 404, 'NOT_FOUND');
    expectEnvelope(
      await topics.setContactTopics({
        params: { id: theirContact },
        body: { topics: [{ topicId: mine.id, subscribed: false }] },
      }),
      404,
      'NOT_FOUND',
    );
    const refused = await topics.setContactTopics({
      params: { id: myContact },
      body: {
        topics: [
          { topicId: mine.id, subscribed: false },
          { topicId: theirs.id, subscribed: false },
        ],
      },
    });
    const error = expectEnvelope(refused, 422, 'VALIDATION_ERROR');
    expect(error.errors?.[0]?.field).toBe('topics.1.topicId');
    // Nothing of the refused request was applied.
    expect((await topicStates(auth, myContact)).Mine).toBe(true);
  });

  it("a contact's states follow the defaults until chosen; a change records one event, a repeat none", async () => {
    const project = await newProject(pigeon);
    const optIn = await createTopic(project.auth, { name: 'Weekly', defaultSubscription: 'OPT_IN' });
    const optOut = await createTopic(project.auth, {
      name: 'Beta',
      defaultSubscription: 'OPT_OUT',
      visibility: 'HIDDEN',
    });
    const contact = await createContact(project.auth, address('states'));
    const before = bodyOf(await api(pigeon, project.auth).topics.contactTopics({ params: { id: contact } }), 200).data;
    expect(before).toEqual([
      { topicId: optOut.id, name: 'Beta', visibility: 'HIDDEN', subscribed: false, chosen: false },
      { topicId: optIn.id, name: 'Weekly', visibility: 'PUBLIC', subscribed: true, chosen: false },
    ]);
    const after = await choose(project.auth, contact, [
      { topicId: optIn.id, subscribed: false },
      { topicId: optOut.id, subscribed: true },
    ]);
    expect(after.map((t) => [t.name, t.subscribed, t.chosen])).toEqual([
      ['Beta', true, true],
      ['Weekly', false, true],
    ]);
    await choose(project.auth, contact, [{ topicId: optIn.id, subscribed: false }]);
    const events = await eventsOf(contact, 'contact.topic.');
    // One statement records both: their order between them is not defined.
    expect(events.map((e) => [e.name, e.data.topicName, e.data.source]).sort()).toEqual([
      ['contact.topic.subscribed', 'Beta', 'api'],
      ['contact.topic.unsubscribed', 'Weekly', 'api'],
    ]);
    // The activity feed shows them under their own types.
    const feed = await api(pigeon, project.auth).activity.list({
      query: { types: 'contact.topic.subscribed,contact.topic.unsubscribed', contactId: contact },
    });
    expect(
      bodyOf(feed, 200)
        .data.map((a) => a.type)
        .sort(),
    ).toEqual(['contact.topic.subscribed', 'contact.topic.unsubscribed']);
    // Choosing the default explicitly changes no state: no event, but the choice is kept.
    const other = await createContact(project.auth, address('default'));
    const chosen = await choose(project.auth, other, [{ topicId: optIn.id, subscribed: true }]);
    expect(chosen.find((t) => t.name === 'Weekly')).toMatchObject({ subscribed: true, chosen: true });
    expect(await eventsOf(other, 'contact.topic.')).toEqual([]);
    // The contact's own subscription is not the topics'.
    expect(await subscribedOf(contact)).toBe(true);
  });

  it('the same change sent several times at once records one event', async () => {
    const project = await newProject(pigeon);
    const topic = await createTopic(project.auth, { name: 'Racy', defaultSubscription: 'OPT_IN' });
    const contact = await createContact(project.auth, address('race'));
    await Promise.all(
      Array.from({ length: 6 }, () => choose(project.auth, contact, [{ topicId: topic.id, subscribed: false }])),
    );
    expect((await eventsOf(contact, 'contact.topic.')).map((e) => e.name)).toEqual(['contact.topic.unsubscribed']);
  });
});

describe('topics and a project reset', () => {
  it("resetting a project wipes its topics and the contacts' choices, as the rest of its data", async () => {
    const { owner, project, auth } = await newProject(pigeon);
    const topic = await createTopic(auth, { name: 'Gone after reset', defaultSubscription: 'OPT_IN' });
    const contact = await createContact(auth, address('reset'));
    await choose(auth, contact, [{ topicId: topic.id, subscribed: false }]);
    const reset = await api(pigeon, { cookie: owner.cookie }).users.resetProject({ params: { id: project.id } });
    expect(bodyOf(reset, 200).deleted).toMatchObject({ topics: 1, contact_topics: 1 });
    expect(bodyOf(await api(pigeon, auth).topics.list(), 200).data).toEqual([]);
  });
});

describe('campaigns and workflow sends with a topic', () => {
  let sender: Sender;
  beforeAll(async () => {
    sender = await verifiedSender(pigeon, dns);
  });

  it('a campaign reaches only contacts subscribed to its topic and to mail; the count is the send', async () => {
    const weekly = await createTopic(sender.auth, { name: 'Weekly digest', defaultSubscription: 'OPT_IN' });
    const beta = await createTopic(sender.auth, { name: 'Beta program', defaultSubscription: 'OPT_OUT' });
    const emails = {
      plain: address('plain'),
      leftWeekly: address('left-weekly'),
      unsubscribed: address('unsubscribed'),
      joinedBeta: address('joined-beta'),
    };
    const ids = {
      plain: await createContact(sender.auth, emails.plain),
      leftWeekly: await createContact(sender.auth, emails.leftWeekly),
      unsubscribed: await createContact(sender.auth, emails.unsubscribed, false),
      joinedBeta: await createContact(sender.auth, emails.joinedBeta),
    };
    await choose(sender.auth, ids.leftWeekly, [{ topicId: weekly.id, subscribed: false }]);
    await choose(sender.auth, ids.joinedBeta, [{ topicId: beta.id, subscribed: true }]);
    await choose(sender.auth, ids.unsubscribed, [{ topicId: beta.id, subscribed: true }]);

    const count = async (topicId: string | null, type: 'MARKETING' | 'TRANSACTIONAL' = 'MARKETING') =>
      bodyOf(
        await api(pigeon, sender.auth).campaigns.audienceCount({ body: { type, audienceType: 'ALL', topicId } }),
        200,
      ).count;
    expect(await count(null)).toBe(3);
    expect(await count(weekly.id)).toBe(2);
    expect(await count(beta.id)).toBe(1);
    // With a topic, a TRANSACTIONAL campaign still leaves out contacts unsubscribed from mail.
    expect(await count(beta.id, 'TRANSACTIONAL')).toBe(1);
    expect(await count(null, 'TRANSACTIONAL')).toBe(4);
    expectEnvelope(
      await api(pigeon, sender.auth).campaigns.audienceCount({
        body: { type: 'MARKETING', audienceType: 'ALL', topicId: '0190c2a4-7b7e-7cc0-9a3f-1c2d3e4f5a6b' },
      }),
      422,
      'VALIDATION_ERROR',
    );

    const weeklySend = await sendCampaign(sender, weekly.id);
    expect(weeklySend.totalRecipients).toBe(2);
    const betaSend = await sendCampaign(sender, beta.id);
    expect(betaSend.totalRecipients).toBe(1);
    await until(
      () => mailTo(emails.plain).length + mailTo(emails.joinedBeta).length,
      (n) => n === 3,
    );
    expect(mailTo(emails.plain)).toHaveLength(1);
    expect(mailTo(emails.joinedBeta)).toHaveLength(2);
    expect(mailTo(emails.leftWeekly)).toHaveLength(0);
    expect(mailTo(emails.unsubscribed)).toHaveLength(0);
    const rows = await queryRows<{ campaign_id: string; n: number }>(
      pigeon.deps.db.pool,
      sql`SELECT campaign_id, count(*)::int AS n FROM emails
          WHERE campaign_id = ANY(${[weeklySend.id, betaSend.id]}::uuid[]) GROUP BY 1`,
    );
    expect(Object.fromEntries(rows.map((r) => [r.campaign_id, r.n]))).toEqual({
      [weeklySend.id]: 2,
      [betaSend.id]: 1,
    });
  });

  it("a campaign's topic must be the project's; a topic in use is not deleted (409) until the campaign goes", async () => {
    const topic = await createTopic(sender.auth, { name: 'In use', defaultSubscription: 'OPT_IN' });
    const foreign = await createTopic((await newProject(pigeon)).auth, {
      name: 'Foreign',
      defaultSubscription: 'OPT_IN',
    });
    const body = {
      name: 'Uses a topic',
      subject: 'S',
      body: '<p>B</p>',
      from: sender.from,
      type: 'MARKETING' as const,
      audienceType: 'ALL' as const,
    };
    const refused = await api(pigeon, sender.auth).campaigns.create({ body: { ...body, topicId: foreign.id } });
    expect(expectEnvelope(refused, 422, 'VALIDATION_ERROR').errors?.[0]?.field).toBe('topicId');
    const created = bodyOf(
      await api(pigeon, sender.auth).campaigns.create({ body: { ...body, topicId: topic.id } }),
      201,
    );
    const inUse = await api(pigeon, sender.auth).topics.delete({ params: { id: topic.id } });
    expect(expectEnvelope(inUse, 409, 'CONFLICT').message).toContain('Uses a topic');
    expect((await api(pigeon, sender.auth).campaigns.delete({ params: { id: created.data.id } })).status).toBe(204);
    expect((await api(pigeon, sender.auth).topics.delete({ params: { id: topic.id } })).status).toBe(204);
    expectEnvelope(await api(pigeon, sender.auth).topics.get({ params: { id: topic.id } }), 404, 'NOT_FOUND');
  });

  it('a workflow SEND_EMAIL step with a topic skips a contact who left the topic and sends to the others', async () => {
    const topic = await createTopic(sender.auth, { name: 'Tips', defaultSubscription: 'OPT_IN' });
    const templateId = await createTemplate(pigeon, sender.auth, {
      subject: 'A tip',
      body: '<p>Tip</p>',
      from: sender.from,
      type: 'MARKETING',
    });
    const trigger = `tip-wanted-${process.pid}`;
    const workflow = await buildWorkflow(pigeon, sender.auth, {
      trigger,
      steps: [{ key: 'send', type: 'SEND_EMAIL', config: { templateId, topicId: topic.id } }],
      transitions: [],
    });
    const stays = address('stays');
    const leaves = address('leaves');
    const leaverId = await createContact(sender.auth, leaves);
    await choose(sender.auth, leaverId, [{ topicId: topic.id, subscribed: false }]);
    await track(pigeon, sender.auth, stays, trigger);
    await track(pigeon, sender.auth, leaves, trigger);
    const done = await until(
      () => executionsOf(pigeon, sender.auth, workflow.id),
      (list) => list.length === 2 && list.every((e) => e.status === 'COMPLETED'),
    );
    const leaverExecution = done.find((e) => e.contactId === leaverId);
    assert(leaverExecution);
    const detail = await executionDetail(pigeon, sender.auth, workflow.id, leaverExecution.id);
    expect(detail.steps[0]).toMatchObject({
      status: 'SKIPPED',
      output: { reason: 'not_subscribed_to_topic', topicId: topic.id },
    });
    await until(
      () => mailTo(stays).length,
      (n) => n === 1,
    );
    expect(mailTo(leaves)).toHaveLength(0);
    // The step names the topic: it cannot be deleted while the workflow has it.
    expectEnvelope(await api(pigeon, sender.auth).topics.delete({ params: { id: topic.id } }), 409, 'CONFLICT');
  });
});

describe("a topic mail's links: one-click List-Unsubscribe and the preference page", () => {
  let sender: Sender;
  let hook: Target;
  beforeAll(async () => {
    sender = await verifiedSender(pigeon, dns);
    hook = await startTarget();
    const endpoint = await api(pigeon, sender.auth).webhookEndpoints.create({
      body: { url: `${hook.origin}/topics`, eventTypes: ['contact.topic.*'] },
    });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
    return () => hook.close();
  });

  it("one-click POST to a topic mail's List-Unsubscribe leaves that topic only", async () => {
    const digest = await createTopic(sender.auth, { name: 'Digest', defaultSubscription: 'OPT_IN' });
    const other = await createTopic(sender.auth, { name: 'Other news', defaultSubscription: 'OPT_IN' });
    const email = address('one-click');
    const contactId = await createContact(sender.auth, email);
    const digestSend = await sendCampaign(sender, digest.id);
    const [message] = await until(
      () => mailTo(email),
      (l) => l.length === 1,
    );
    assert(message);
    expect(message.headers.get('list-unsubscribe-post')).toBe('List-Unsubscribe=One-Click');
    const url = /<(https?:[^>]+)>/.exec(message.headers.get('list-unsubscribe') ?? '')?.[1];
    assert(url, 'a List-Unsubscribe URL');
    // As mailbox providers send it (RFC 8058: multipart/form-data).
    const form = new FormData();
    form.append('List-Unsubscribe', 'One-Click');
    const res = await fetch(url, { method: 'POST', body: form, redirect: 'manual' });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('Unsubscribed from Digest\n');
    expect(await topicStates(sender.auth, contactId)).toMatchObject({ Digest: false, 'Other news': true });
    expect(await subscribedOf(contactId)).toBe(true);
    const events = await eventsOf(contactId, 'contact.');
    expect(events.map((e) => [e.name, e.data.topicId, e.data.source])).toEqual([
      ['contact.topic.unsubscribed', digest.id, 'one_click'],
    ]);
    expect(events[0]?.data.emailId).toBeTypeOf('string');
    // Leaving a campaign's topic from its mail is that campaign's unsubscribe.
    const stats = bodyOf(await api(pigeon, sender.auth).campaigns.stats({ params: { id: digestSend.id } }), 200);
    expect(stats.unsubscribed).toBe(1);
    // A second one-click changes nothing more.
    await fetch(url, { method: 'POST', body: form });
    expect(await eventsOf(contactId, 'contact.')).toHaveLength(1);
    // The topic is signed with the rest: a token rewritten to name another topic is refused.
    const [payload = '', signature] = (new URL(url).pathname.split('/').pop() ?? '').split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    expect(claims.t).toBe(digest.id);
    const forged = Buffer.from(JSON.stringify({ ...claims, t: other.id })).toString('base64url');
    const refused = await fetch(new URL(`/unsubscribe/${forged}.${signature}`, url), { method: 'POST', body: form });
    expect(refused.status).toBe(400);
    expect(await topicStates(sender.auth, contactId)).toMatchObject({ 'Other news': true });
    // Mail of the other topic still reaches the contact; the digest does not.
    expect((await sendCampaign(sender, other.id)).totalRecipients).toBeGreaterThanOrEqual(1);
    await until(
      () => mailTo(email).length,
      (n) => n === 2,
    );
    const again = await sendCampaign(sender, digest.id);
    const frozen = await queryRows(
      pigeon.deps.db.pool,
      sql`SELECT 1 FROM emails WHERE campaign_id = ${again.id}::uuid AND contact_id = ${contactId}::uuid`,
    );
    expect(frozen).toEqual([]);
  });

  it('the preference page lists the public topics with their state; its POST saves them and the webhook hears it', async () => {
    const project = sender;
    const first = await createTopic(project.auth, { name: 'Aardvark facts', defaultSubscription: 'OPT_IN' });
    const second = await createTopic(project.auth, {
      name: 'Aardvark sightings',
      description: 'When one is seen',
      defaultSubscription: 'OPT_OUT',
    });
    const hidden = await createTopic(project.auth, {
      name: 'Aardvark internal',
      defaultSubscription: 'OPT_IN',
      visibility: 'HIDDEN',
    });
    const email = address('manage');
    const contactId = await createContact(project.auth, email);
    await sendCampaign(sender, first.id, '<p>Facts</p><a href="{{manageUrl}}">Preferences</a>');
    const [message] = await until(
      () => mailTo(email),
      (l) => l.length === 1,
    );
    assert(message);
    const manageUrl = hrefs(message).find((h) => h.includes('/manage/'));
    assert(manageUrl, 'a manage link');

    const page = await (await fetch(manageUrl)).text();
    expect(page).toContain('Aardvark facts');
    expect(page).toContain('When one is seen');
    expect(page).not.toContain('Aardvark internal');
    expect(page).toMatch(new RegExp(`name="topic" value="${first.id}" checked`));
    expect(page).toMatch(new RegExp(`name="topic" value="${second.id}">`));
    expect(page).toContain('Unsubscribe from all');
    expect(page).not.toMatch(/<script/i);
    // A GET changes nothing.
    expect(await eventsOf(contactId, 'contact.')).toEqual([]);

    // Untick the first, tick the second; the hidden topic was not on the form and keeps its state.
    const form = new URLSearchParams([
      ['action', 'save'],
      ['shown', first.id],
      ['shown', second.id],
      ['topic', second.id],
    ]);
    const saved = await fetch(manageUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    });
    expect(saved.status).toBe(200);
    const savedPage = await saved.text();
    expect(savedPage).toContain('Your choices are saved');
    expect(savedPage).toMatch(new RegExp(`name="topic" value="${second.id}" checked`));
    const states = await topicStates(project.auth, contactId);
    expect(states).toMatchObject({
      'Aardvark facts': false,
      'Aardvark sightings': true,
      'Aardvark internal': true,
    });
    expect(hidden.visibility).toBe('HIDDEN');

    const heard = await until(
      () =>
        hook.received
          .map((r) => JSON.parse(r.body))
          .filter((e) => e.data.contact.id === contactId)
          .map((e) => [e.type, e.data.topic.name, e.data.subscribed, e.data.source]),
      (l) => l.length === 2,
    );
    expect(heard.sort()).toEqual([
      ['contact.topic.subscribed', 'Aardvark sightings', true, 'link'],
      ['contact.topic.unsubscribed', 'Aardvark facts', false, 'link'],
    ]);

    // "Unsubscribe from all" leaves every mail, the topics' choices stay as they were.
    const all = await fetch(manageUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=unsubscribe',
    });
    expect(all.status).toBe(200);
    expect(await subscribedOf(contactId)).toBe(false);
    expect((await eventsOf(contactId, 'contact.unsubscribed')).length).toBe(1);
  });

  it("a topic mail's unsubscribe page offers the topic, and everything as the second choice", async () => {
    const topic = await createTopic(sender.auth, { name: 'Release notes', defaultSubscription: 'OPT_IN' });
    const email = address('page');
    const contactId = await createContact(sender.auth, email);
    await sendCampaign(sender, topic.id, '<p>Notes</p><a href="{{unsubscribeUrl}}">Unsubscribe</a>');
    const [message] = await until(
      () => mailTo(email),
      (l) => l.length === 1,
    );
    assert(message);
    const url = hrefs(message).find((h) => h.includes('/unsubscribe/'));
    assert(url);
    const page = await (await fetch(url)).text();
    expect(page).toContain('Unsubscribe from Release notes?');
    expect(page).toContain('name="action" value="unsubscribe_all"');
    const left = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'action=unsubscribe',
    });
    expect(left.status).toBe(200);
    expect(await left.text()).toContain('You are unsubscribed from Release notes');
    expect(await topicStates(sender.auth, contactId)).toMatchObject({ 'Release notes': false });
    expect(await subscribedOf(contactId)).toBe(true);
  });
});
