import type pg from 'pg';
import { queryRows, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import type { LinkClaims } from '../rendering/public.js';
import { applyTopicChoices, type ContactTopicState, contactTopicStates } from '../topics/public.js';
import { findLinkContact, type LinkContact, setSubscribedFromLink } from './service.js';

/** What the preference page (`manageUrl`) shows: the contact and the project's public topics. */
export interface ManageView {
  contact: LinkContact;
  topics: ContactTopicState[];
}

/** The contact a link names and their public topics; undefined once the contact is deleted. */
export async function manageView(db: Queryable, claims: LinkClaims): Promise<ManageView | undefined> {
  const contact = await findLinkContact(db, claims);
  if (!contact) return undefined;
  return { contact, topics: await contactTopicStates(db, contact.id, { publicOnly: true }) };
}

/**
 * The preference page's "Save": each public topic the form showed (`shown`) is subscribed when it
 * was ticked (`ticked`) and left otherwise. Topics the form did not show (hidden ones, one made
 * after the page was opened) keep their state.
 */
export async function saveTopicsFromLink(
  pool: pg.Pool,
  claims: LinkClaims,
  form: { shown: string[]; ticked: string[] },
): Promise<ManageView | undefined> {
  const before = await manageView(pool, claims);
  if (!before) return undefined;
  const ticked = new Set(form.ticked);
  const shown = new Set(form.shown);
  const choices = before.topics
    .filter((t) => shown.has(t.topic_id))
    .map((t) => ({ topicId: t.topic_id, subscribed: ticked.has(t.topic_id) }));
  await applyTopicChoices(
    pool,
    { projectId: before.contact.projectId, contactId: before.contact.id },
    { choices, source: 'link', emailId: claims.e ?? null },
  );
  return manageView(pool, claims);
}

/** The topic a link was made for, while it exists in the contact's project. */
async function linkTopic(db: Queryable, contact: LinkContact, topicId: string) {
  const [topic] = await queryRows<{ id: string; name: string }>(
    db,
    sql`SELECT id, name FROM topics WHERE id = ${topicId}::uuid AND project_id = ${contact.projectId}::uuid`,
  );
  return topic;
}

export interface TopicUnsubscribe {
  contact: LinkContact;
  /** The topic left; undefined when the link named none (or its topic is gone) and the contact left everything. */
  topic?: { id: string; name: string };
}

/**
 * An unsubscribe link's change (its page's button, or RFC 8058 one-click): a link made for a
 * topic's mail leaves that topic only; any other link, or one whose topic was deleted since,
 * unsubscribes the contact from all marketing mail (the recipient asked to get less, and the
 * topic that would have narrowed it is gone).
 */
export async function unsubscribeFromLink(
  pool: pg.Pool,
  claims: LinkClaims,
  source: 'link' | 'one_click',
): Promise<TopicUnsubscribe | undefined> {
  const contact = await findLinkContact(pool, claims);
  if (!contact) return undefined;
  const topic = claims.t ? await linkTopic(pool, contact, claims.t) : undefined;
  if (!topic) {
    const changed = await setSubscribedFromLink(pool, claims, false);
    return changed ? { contact: changed } : undefined;
  }
  await applyTopicChoices(
    pool,
    { projectId: contact.projectId, contactId: contact.id },
    { choices: [{ topicId: topic.id, subscribed: false }], source, emailId: claims.e ?? null },
  );
  return { contact, topic };
}

/** The unsubscribe page's view: the contact and, for a topic's link, the topic it would leave. */
export async function unsubscribeView(db: Queryable, claims: LinkClaims): Promise<TopicUnsubscribe | undefined> {
  const contact = await findLinkContact(db, claims);
  if (!contact) return undefined;
  const topic = claims.t ? await linkTopic(db, contact, claims.t) : undefined;
  return topic ? { contact, topic } : { contact };
}
