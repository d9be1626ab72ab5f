import { type AddressObject, simpleParser } from 'mailparser';
import { uuidv7 } from 'uuidv7';
import { queryRows, sql } from '../../db/query.js';
import { inTransaction, type Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import { createMissingContacts } from '../contacts/public.js';
import { insertEvents } from '../event-log/public.js';
import { attachmentUrl } from './attachments.js';
import { type Arrival, type Verdicts, verifyArrival } from './auth.js';
import type { RouteMatch } from './match.js';
import { emailIdOfAddresses, findReplyLink, type ReplyLink } from './reply.js';

type Parsed = Awaited<ReturnType<typeof simpleParser>>;
type Lookup = Parameters<typeof verifyArrival>[2];

const addresses = (field: AddressObject | AddressObject[] | undefined): string[] =>
  (Array.isArray(field) ? field : field ? [field] : []).flatMap((a) =>
    a.value.flatMap((v) => (v.address ? [v.address.toLowerCase()] : [])),
  );

/** Each header line as written (unfolded), in order, duplicates kept. */
const headerList = (parsed: Parsed) =>
  parsed.headerLines.map(({ line }) => {
    const colon = line.indexOf(':');
    return {
      name: line.slice(0, colon).trim(),
      value: line
        .slice(colon + 1)
        .replace(/\r?\n[ \t]+/g, ' ')
        .trim(),
    };
  });

/** In-Reply-To first, then References newest first. */
function messageIdsAnswered(parsed: Parsed): string[] {
  const refs = parsed.references === undefined ? [] : [parsed.references].flat();
  return [...(parsed.inReplyTo ? parsed.inReplyTo.split(/\s+/) : []), ...refs.flatMap((r) => r.split(/\s+/)).reverse()];
}

/** The contact the event is recorded on: the one the answered email went to, else the sender (created unsubscribed). */
async function eventContact(db: Queryable, projectId: string, sender: string, link: ReplyLink | undefined) {
  if (link?.contactId && link.contactEmail) return { id: link.contactId, email: link.contactEmail };
  await createMissingContacts(db, projectId, [sender], false);
  const [row] = await queryRows<{ id: string; email: string }>(
    db,
    sql`SELECT id, email FROM contacts WHERE project_id = ${projectId}::uuid AND email = ${sender}`,
  );
  if (!row) throw new Error('the sender has no contact');
  return row;
}

export interface Received {
  inboundEmailId: string;
  routeId: string;
  eventId: string | null;
  /** The route already had this Message-ID: a sender's retry, taken again and changing nothing. */
  retry: boolean;
}

/** What every route's copy of one arriving message shares. */
interface Arrived {
  raw: Buffer;
  parsed: Parsed;
  sender: string;
  senderName: string | null;
  auth: Verdicts;
}

/**
 * Takes one arriving message for the routes its recipients matched: parsed once, SPF/DKIM/DMARC
 * checked once, then per route one stored message and, for WEBHOOK and WORKFLOW routes, one
 * `email.received` event on a contact, committed together. The event's content (text, HTML,
 * headers) is read from the stored message when a webhook is sent, so it follows the content retention.
 */
export async function receiveMessage(
  deps: AppDeps,
  raw: Buffer,
  matches: RouteMatch[],
  arrival: Arrival,
  resolver: Lookup,
): Promise<Received[]> {
  const [parsed, auth] = await Promise.all([
    simpleParser(raw, { skipImageLinks: true, skipTextToHtml: true }),
    verifyArrival(raw, arrival, resolver),
  ]);
  const fromValue = parsed.from?.value[0];
  if (!fromValue?.address) {
    // RFC 5322 requires From; without it there is no one to answer or to record the event on.
    throw Object.assign(new Error('5.6.0 The message has no From address'), { responseCode: 550 });
  }
  const arrived = { raw, parsed, sender: fromValue.address.toLowerCase(), senderName: fromValue.name || null, auth };
  const byRoute = new Map<string, RouteMatch[]>();
  for (const m of matches) byRoute.set(m.routeId, [...(byRoute.get(m.routeId) ?? []), m]);
  const received: Received[] = [];
  for (const group of byRoute.values()) received.push(await receiveForRoute(deps, arrived, group));
  return received;
}

/** One route's copy, in one transaction: the reply link, the contact, the stored message, the event. */
function receiveForRoute(deps: AppDeps, arrived: Arrived, group: RouteMatch[]): Promise<Received> {
  const route = group[0] as RouteMatch;
  const to = group.map((m) => m.address);
  const addressEmailId = emailIdOfAddresses(to, deps.config.secrets.linkSigning);
  return inTransaction(deps.db.pool, async (client) => {
    const refs = { addressEmailId, messageIds: messageIdsAnswered(arrived.parsed) };
    const link = await findReplyLink(client, route.projectId, refs);
    const contact =
      route.action === 'RECORD' ? null : await eventContact(client, route.projectId, arrived.sender, link);
    const id = uuidv7();
    const message = messageFacts(arrived, to);
    const stored = await storeMessage(client, { id, route, contact, link, arrived, message });
    if (!stored) {
      const [first] = await queryRows<{ id: string }>(
        client,
        sql`SELECT id FROM inbound_emails WHERE route_id = ${route.routeId}::uuid AND message_id = ${message.messageId}`,
      );
      return { inboundEmailId: first?.id ?? id, routeId: route.routeId, eventId: null, retry: true };
    }
    const base = { inboundEmailId: id, routeId: route.routeId, eventId: null };
    if (!contact) return { ...base, retry: false };
    const expires = deps.clock.nowMs() + route.contentDays * 86_400_000;
    const data = {
      inboundEmailId: id,
      routeId: route.routeId,
      // Which consumer takes it: webhook endpoints (WEBHOOK) or workflows (WORKFLOW). Not in the payload.
      action: route.action,
      ...message,
      attachments: message.attachments.map((a, n) => ({ ...a, url: attachmentUrl(deps, id, n, expires) })),
      inReplyTo: link ? { emailId: link.emailId, contactId: link.contactId, by: link.by } : null,
    };
    const eventId = uuidv7();
    await queryRows(
      client,
      insertEvents(sql`VALUES (${eventId}::uuid, ${route.projectId}::uuid, ${contact.id}::uuid, 'email.received',
                               ${JSON.stringify(data)}::jsonb)`),
    );
    return { ...base, eventId, retry: false };
  });
}

const messageFacts = ({ parsed, sender, senderName, auth }: Arrived, to: string[]) => ({
  messageId: parsed.messageId ?? null,
  from: { email: sender, name: senderName },
  to,
  cc: addresses(parsed.cc),
  subject: parsed.subject ?? '',
  auth,
  attachments: parsed.attachments.map((a) => ({
    filename: a.filename ?? null,
    contentType: a.contentType,
    size: a.size,
  })),
});

interface Stored {
  id: string;
  route: RouteMatch;
  contact: { id: string } | null;
  link: ReplyLink | undefined;
  arrived: Arrived;
  message: ReturnType<typeof messageFacts>;
}

/** Inserts the message; answers its id, or undefined when the route already has its Message-ID (a retry). */
async function storeMessage(db: Queryable, { id, route, contact, link, arrived, message }: Stored) {
  const { parsed, raw } = arrived;
  const rows = await queryRows<{ id: string }>(
    db,
    sql`INSERT INTO inbound_emails (id, project_id, route_id, contact_id, message_id, from_email, from_name, to_emails,
          cc_emails, subject, text, html, headers, auth, attachments, raw, reply_email_id, reply_contact_id, reply_by)
        VALUES (${id}::uuid, ${route.projectId}::uuid, ${route.routeId}::uuid, ${contact?.id ?? null}::uuid,
          ${message.messageId}, ${message.from.email}, ${message.from.name}, ${message.to}::text[], ${message.cc}::text[],
          ${message.subject}, ${parsed.text ?? null}, ${typeof parsed.html === 'string' ? parsed.html : null},
          ${JSON.stringify(headerList(parsed))}::jsonb, ${JSON.stringify(message.auth)}::jsonb,
          ${JSON.stringify(message.attachments)}::jsonb, ${raw}, ${link?.emailId ?? null}::uuid,
          ${link?.contactId ?? null}::uuid, ${link?.by ?? null})
        ON CONFLICT (route_id, message_id) DO NOTHING
        RETURNING id`,
  );
  return rows[0]?.id;
}
