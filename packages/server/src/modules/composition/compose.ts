import type { ContentType } from '@pigeon/contract';
import { type ContactRow, toContactDto } from '../contacts/public.js';
import { addTracking, listUnsubscribeHeaders, trackedLink, trackingOf } from '../engagement/public.js';
import {
  htmlToText,
  missingVariables,
  renderSubject,
  renderTemplate,
  replyToken,
  subscriptionUrls,
  textPart,
} from '../rendering/public.js';

/** What a message says before it is made for one contact. */
export interface MessageContent {
  subject: string;
  html: string;
  /** The plain part as written (variables filled); without it, the plain part is made from the HTML. */
  text?: string;
  type: ContentType;
}

export interface CompositionSettings {
  publicUrl: string;
  /** The sender domain's verified tracking domain: the open pixel and click links go there instead of `publicUrl`. */
  trackingHost?: string | null;
  linkSecret: string;
  tracked: boolean;
  unsubscribeMailbox: string | null;
  /** The sender's own headers, under Pigeon's (List-Unsubscribe wins). */
  headers?: Record<string, string>;
  /** More variables over the recipient's (a workflow's `event`, `workflow`, and the workflow's contact). */
  variables?: Record<string, unknown>;
  /** Also list the variables the content uses that had no value (`missing`). */
  reportMissing?: boolean;
  /** The topic the mail is about: its subscription links carry it, so unsubscribing leaves only that topic. */
  topicId?: string | null;
}

export interface ComposedMessage {
  subject: string;
  html: string;
  text: string;
  headers: Record<string, string>;
  /** With `reportMissing`: placeholders without a fallback that rendered empty. */
  missing?: string[];
}

/**
 * Composition: content + one contact → the message. Template variables (the contact's data,
 * then `data`, `email`, `contact` and the subscription links), click and open tracking, and the
 * List-Unsubscribe headers. `/v1/send` composes at request time; campaign (and workflow) mail is
 * composed by the delivery worker from a content reference, through this same function.
 * `data` is the contact's stored data with any one-off values of the request on top.
 */
export function composeMessage(
  content: MessageContent,
  contact: ContactRow,
  data: Record<string, unknown>,
  emailId: string,
  settings: CompositionSettings,
): ComposedMessage {
  const claims = settings.topicId ? { c: contact.id, e: emailId, t: settings.topicId } : { c: contact.id, e: emailId };
  const links = subscriptionUrls(settings.publicUrl, claims, settings.linkSecret);
  const vars = {
    ...data,
    data,
    email: contact.email,
    contact: toContactDto(contact),
    ...settings.variables,
    ...links,
    replyToken: replyToken(emailId, settings.linkSecret),
  };
  const rendered = renderTemplate(content.html, vars, { html: true });
  const tracking = trackingOf(settings, emailId);
  const html = settings.tracked ? addTracking(rendered, tracking) : rendered;
  const headers = {
    ...settings.headers,
    ...listUnsubscribeHeaders({
      type: content.type,
      bodySource: content.html,
      topic: Boolean(settings.topicId),
      unsubscribeUrl: links.unsubscribeUrl,
      mailbox: settings.unsubscribeMailbox,
    }),
  };
  const text =
    content.text === undefined
      ? textPart(
          content.html,
          vars,
          (link) => (settings.tracked ? trackedLink(link, tracking) : link),
          () => htmlToText(html),
        )
      : renderTemplate(content.text, vars, { html: false });
  const sources = [content.subject, content.html, ...(content.text === undefined ? [] : [content.text])];
  const missing = settings.reportMissing ? missingVariables(sources, vars) : undefined;
  return { subject: renderSubject(content.subject, vars), html, text, headers, ...(missing ? { missing } : {}) };
}
