import { preparedRows, raw, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import { subscribeFromLink } from '../contacts/public.js';
import { markClicked, markOpened } from '../email-states/public.js';
import { insertEmailEvents } from '../event-log/public.js';
import type { LinkClaims, TrackingClaims } from '../rendering/public.js';

/**
 * Burst rule: an open of an email less than this long after its last counted open, or a click of
 * the same link of the same email less than this long after its last counted click, is folded
 * into that one: not counted, no event. Image proxies and link scanners fetch within seconds.
 */
export const BURST_SECONDS = 60;

export interface LinkContact {
  id: string;
  projectId: string;
  email: string;
  subscribed: boolean;
  projectName: string;
  subscribedRedirectUrl: string | null;
  unsubscribedRedirectUrl: string | null;
}

/** The contact a link names, with its project's page settings; undefined once the contact is deleted. */
export async function findLinkContact(db: Queryable, claims: LinkClaims): Promise<LinkContact | undefined> {
  const [row] = await preparedRows<LinkContact>(
    db,
    'engagement.contact',
    sql`SELECT c.id, c.project_id AS "projectId", c.email, c.subscribed, p.name AS "projectName",
               p.subscribed_redirect_url AS "subscribedRedirectUrl", p.unsubscribed_redirect_url AS "unsubscribedRedirectUrl"
        FROM contacts c JOIN projects p ON p.id = c.project_id WHERE c.id = ${claims.c}`,
  );
  return row;
}

/** Sets `subscribed` from a link (and its event, only if it changed); answers the contact as the page shows it. */
export async function setSubscribedFromLink(
  db: Queryable,
  claims: LinkClaims,
  subscribed: boolean,
): Promise<LinkContact | undefined> {
  const [row] = await preparedRows<LinkContact>(
    db,
    'engagement.set-subscribed',
    sql`WITH ${subscribeFromLink(claims.c, subscribed, claims.e ?? null)}
        SELECT c.id, c.project_id AS "projectId", c.email, ${subscribed}::boolean AS subscribed, p.name AS "projectName",
               p.subscribed_redirect_url AS "subscribedRedirectUrl", p.unsubscribed_redirect_url AS "unsubscribedRedirectUrl"
        FROM contacts c JOIN projects p ON p.id = c.project_id WHERE c.id = ${claims.c}::uuid`,
  );
  return row;
}

/** Counts an open unless it falls in the burst window of the last one; one statement. */
export async function recordOpen(db: Queryable, claims: TrackingClaims): Promise<void> {
  await preparedRows(
    db,
    'engagement.open',
    sql`WITH ${markOpened(claims.e, BURST_SECONDS)}
        ${insertEmailEvents({ from: raw('e'), name: raw(`'email.open'`) })}`,
  );
}

/**
 * Counts a click unless the same link of the same email was counted within the burst window.
 * A click also marks the email opened (clients that block images still click), without an open event.
 */
export async function recordClick(db: Queryable, claims: Required<TrackingClaims>): Promise<void> {
  await preparedRows(
    db,
    'engagement.click',
    sql`WITH ${markClicked(claims.e, claims.u, BURST_SECONDS)}
        ${insertEmailEvents({ from: raw('e'), name: raw(`'email.click'`), extra: { link: sql`${claims.u}::text` } })}`,
  );
}
