import { type AddressObject, simpleParser } from 'mailparser';
import { uuidv7 } from 'uuidv7';
import { queryRows, sql } from '../../db/query.js';
import { inTransaction, type Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import { createMissingContacts } from '../contacts/rows.js';
import { insertEvents } from '../event-log/service.js';
import { attachmentUrl } from './attachments.js';
import { type Arrival, verifyArrival } from './auth.js';
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
  const sender = fromValue.address.toLowerCase();
  const byRoute = new Map<string, RouteMatch[]>();
  for (const m of matches) byRoute.set(m.routeId, [...(byRoute.get(m.routeId) ?? []), m]);
  const received: Received[] = [];
  for (const group of byRoute.values()) {
    const route = group[0] as RouteMatch;
    const to = group.map((m) => m.address);
    const addressEmailId = emailIdOfAddresses(to, deps.config.secrets.linkSigning);
    received.push(
      await inTransaction(deps.db.pool, async (client) => {
        const link = await findReplyLink(client, route.projectId, {
          addressEmailId,
          messageIds: messageIdsAnswered(parsed),
        });
        const contact = route.action === 'RECORD' ? null : await eventContact(client, route.projectId, sender, link);
        const id = uuidv7();
        const attachments = parsed.attachments.map((a) => ({
          filename: a.filename ?? null,
          contentType: a.contentType,
          size: a.size,
        }));
        const expires = Date.now() + route.contentDays * 86_400_000;
        const message = {
          messageId: parsed.messageId ?? null,
          from: { email: sender, name: fromValue?.name || null },
          to,
          cc: addresses(parsed.cc),
          subject: parsed.subject ?? '',
          auth,
        };
        await queryRows(
          client,
          sql`INSERT INTO inbound_emails (id, project_id, route_id, contact_id, message_id, from_email, from_name, to_emails,
                cc_emails, subject, text, html, headers, auth, attachments, raw, reply_email_id, reply_contact_id, reply_by)
              VALUES (${id}::uuid, ${route.projectId}::uuid, ${route.routeId}::uuid, ${contact?.id ?? null}::uuid,
                ${message.messageId}, ${sender}, ${message.from.name}, ${to}::text[], ${message.cc}::text[], ${message.subject},
                ${parsed.text ?? null}, ${typeof parsed.html === 'string' ? parsed.html : null},
                ${JSON.stringify(headerList(parsed))}::jsonb, ${JSON.stringify(auth)}::jsonb,
                ${JSON.stringify(attachments)}::jsonb, ${raw}, ${link?.emailId ?? null}::uuid, ${link?.contactId ?? null}::uuid,
                ${link?.by ?? null})`,
        );
        if (!contact) return { inboundEmailId: id, routeId: route.routeId, eventId: null };
        const data = {
          inboundEmailId: id,
          routeId: route.routeId,
          // Which consumer takes it: webhook endpoints (WEBHOOK) or workflows (WORKFLOW). Not in the payload.
          action: route.action,
          ...message,
          attachments: attachments.map((a, n) => ({ ...a, url: attachmentUrl(deps, id, n, expires) })),
          inReplyTo: link ? { emailId: link.emailId, contactId: link.contactId, by: link.by } : null,
        };
        const eventId = uuidv7();
        await queryRows(
          client,
          insertEvents(sql`VALUES (${eventId}::uuid, ${route.projectId}::uuid, ${contact.id}::uuid, 'email.received',
                                   ${JSON.stringify(data)}::jsonb)`),
        );
        return { inboundEmailId: id, routeId: route.routeId, eventId };
      }),
    );
  }
  return received;
}
