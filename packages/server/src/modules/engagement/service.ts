import { preparedRows, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import { insertSubscriptionEvents } from '../contacts/subscription.js';
import type { LinkClaims, TrackingClaims } from '../rendering/links.js';

/**
 * Burst rule: an open of an email less than this long after its last counted open, or a click of
 * the same link of the same email less than this long after its last counted click, is folded
 * into that one: not counted, no event. Image proxies and link scanners fetch within seconds.
 */
export const BURST_SECONDS = 60;

export interface LinkContact {
  id: string;
  email: string;
  subscribed: boolean;
  projectName: string;
  subscribedRedirectUrl: string | null;
  unsubscribedRedirectUrl: string | null;
}

const CONTACT_SQL = `
  SELECT c.id, c.email, c.subscribed, p.name AS "projectName",
         p.subscribed_redirect_url AS "subscribedRedirectUrl", p.unsubscribed_redirect_url AS "unsubscribedRedirectUrl"
  FROM contacts c JOIN projects p ON p.id = c.project_id WHERE c.id = $1`;

/** The contact a link names, with its project's page settings; undefined once the contact is deleted. */
export async function findLinkContact(db: Queryable, claims: LinkClaims): Promise<LinkContact | undefined> {
  const { rows } = await db.query<LinkContact>({ name: 'engagement.contact', text: CONTACT_SQL, values: [claims.c] });
  return rows[0];
}

/**
 * Sets `subscribed` from a link and records the event only if it changed: the row-level WHERE is
 * re-checked under the row lock, so two simultaneous clicks record one event.
 */
export async function setSubscribedFromLink(
  db: Queryable,
  claims: LinkClaims,
  subscribed: boolean,
): Promise<LinkContact | undefined> {
  const [row] = await preparedRows<LinkContact>(
    db,
    'engagement.set-subscribed',
    sql`WITH changed AS (
          UPDATE contacts SET subscribed = ${subscribed}::boolean, updated_at = now()
          WHERE id = ${claims.c}::uuid AND subscribed <> ${subscribed}::boolean RETURNING id, project_id, subscribed
        ), recorded AS (${insertSubscriptionEvents('changed', 'link', { emailId: sql`${claims.e ?? null}` })})
        SELECT c.id, c.email, ${subscribed}::boolean AS subscribed, p.name AS "projectName",
               p.subscribed_redirect_url AS "subscribedRedirectUrl", p.unsubscribed_redirect_url AS "unsubscribedRedirectUrl"
        FROM contacts c JOIN projects p ON p.id = c.project_id WHERE c.id = ${claims.c}::uuid`,
  );
  return row;
}

const emailEventData = (extra = '') =>
  `jsonb_strip_nulls(jsonb_build_object('emailId', id, 'subject', subject, 'templateId', template_id${extra}))`;

/** Counts an open unless it falls in the burst window of the last one; one statement. */
export async function recordOpen(db: Queryable, claims: TrackingClaims): Promise<void> {
  await db.query({
    name: 'engagement.open',
    text: `
      WITH opened AS (
        UPDATE emails SET opens = opens + 1, opened_at = coalesce(opened_at, now()), last_opened_at = now(),
          updated_at = now()
        WHERE id = $1 AND (last_opened_at IS NULL OR last_opened_at < now() - make_interval(secs => $2))
        RETURNING id, project_id, contact_id, subject, template_id
      )
      INSERT INTO events (id, project_id, contact_id, name, data)
      SELECT uuidv7_compat(), project_id, contact_id, 'email.open', ${emailEventData()}
      FROM opened WHERE contact_id IS NOT NULL`,
    values: [claims.e, BURST_SECONDS],
  });
}

/**
 * Counts a click unless the same link of the same email was counted within the burst window.
 * A click also marks the email opened (clients that block images still click), without an open event.
 */
export async function recordClick(db: Queryable, claims: Required<TrackingClaims>): Promise<void> {
  await db.query({
    name: 'engagement.click',
    text: `
      WITH counted AS (
        INSERT INTO email_link_clicks (email_id, link) SELECT id, $2 FROM emails WHERE id = $1
        ON CONFLICT (email_id, link) DO UPDATE SET clicks = email_link_clicks.clicks + 1, last_clicked_at = now()
          WHERE email_link_clicks.last_clicked_at < now() - make_interval(secs => $3)
        RETURNING email_id
      ), clicked AS (
        UPDATE emails e SET clicks = e.clicks + 1, clicked_at = coalesce(e.clicked_at, now()),
          opened_at = coalesce(e.opened_at, now()), updated_at = now()
        FROM counted WHERE e.id = counted.email_id
        RETURNING e.id, e.project_id, e.contact_id, e.subject, e.template_id
      )
      INSERT INTO events (id, project_id, contact_id, name, data)
      SELECT uuidv7_compat(), project_id, contact_id, 'email.click', ${emailEventData(", 'link', $2::text")}
      FROM clicked WHERE contact_id IS NOT NULL`,
    values: [claims.e, claims.u, BURST_SECONDS],
  });
}
