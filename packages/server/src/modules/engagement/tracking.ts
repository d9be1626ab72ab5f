import type { ContentType, TrackingMode } from '@pigeon/contract';
import { trackingBaseUrl } from '../../kit/public-url.js';
import { ANCHOR_HREF, decodeAttribute, signTrackingToken } from '../rendering/public.js';

/** Whether one message gets the open pixel and click redirects: the send's own choice wins. */
export function shouldTrack(mode: TrackingMode, type: ContentType, override: boolean | undefined): boolean {
  if (override !== undefined) return override;
  if (mode === 'DISABLED') return false;
  return mode === 'ENABLED' || type === 'MARKETING';
}

const SUBSCRIPTION_PATHS = ['/subscribe/', '/unsubscribe/', '/manage/'];

interface TrackingContext {
  publicUrl: string;
  /** The base of the pixel and click URLs: `publicUrl`, or the sender's tracking domain (`trackingBaseUrl`). */
  trackingUrl: string;
  secret: string;
  emailId: string;
  /** Click URLs already signed for this message, by link: the text part reuses the HTML's. */
  clicks?: Map<string, string>;
}

/** The tracking of one message: its pixel and click URLs on the sender's tracking host when it has one, else on `publicUrl`. */
export function trackingOf(
  links: { publicUrl: string; trackingHost?: string | null; linkSecret: string },
  emailId: string,
): TrackingContext {
  return {
    publicUrl: links.publicUrl,
    trackingUrl: trackingBaseUrl(links.publicUrl, links.trackingHost),
    secret: links.linkSecret,
    emailId,
    clicks: new Map(),
  };
}

/**
 * Rewrites every http(s) link of a rendered body to a signed click URL and adds the open pixel.
 * Subscription links stay as they are: they must work even where redirects are blocked, and a
 * click on "unsubscribe" is not engagement.
 */
export function addTracking(html: string, ctx: TrackingContext): string {
  const rewritten = html.replace(ANCHOR_HREF, (match, prefix: string, dq?: string, sq?: string) => {
    const link = decodeAttribute((dq ?? sq ?? '').trim());
    return isTrackable(link, ctx.publicUrl) ? `${prefix}"${clickUrl(ctx, link)}"` : match;
  });
  const pixel = `<img src="${ctx.trackingUrl}/t/o/${signTrackingToken({ e: ctx.emailId }, ctx.secret)}.gif" width="1" height="1" alt="" style="display:block;width:1px;height:1px;border:0" />`;
  const bodyEnd = rewritten.search(/<\/body\s*>/i);
  return bodyEnd === -1 ? rewritten + pixel : rewritten.slice(0, bodyEnd) + pixel + rewritten.slice(bodyEnd);
}

/** What a message's text part shows for a link of its body: the click URL `addTracking` gives it, or the link. */
export const trackedLink = (link: string, ctx: TrackingContext) =>
  isTrackable(link, ctx.publicUrl) ? clickUrl(ctx, link) : link;

const isTrackable = (link: string, publicUrl: string) =>
  /^https?:\/\//i.test(link) && !isSubscriptionLink(link, publicUrl);

function clickUrl(ctx: TrackingContext, link: string): string {
  const known = ctx.clicks?.get(link);
  if (known) return known;
  const url = `${ctx.trackingUrl}/t/c/${signTrackingToken({ e: ctx.emailId, u: link }, ctx.secret)}`;
  ctx.clicks?.set(link, url);
  return url;
}

const isSubscriptionLink = (link: string, publicUrl: string) =>
  SUBSCRIPTION_PATHS.some((path) => link.startsWith(publicUrl + path));

/**
 * RFC 2369 + RFC 8058 headers. MARKETING mail always carries them, TRANSACTIONAL mail only when
 * its body offers an unsubscribe link or it is about a topic, HEADLESS never. The DKIM signature
 * covers both (see delivery).
 */
export function listUnsubscribeHeaders(opts: {
  type: ContentType;
  bodySource: string;
  /** Mail about a topic: its URL (signed with the topic) leaves only that topic. */
  topic?: boolean;
  unsubscribeUrl: string;
  mailbox: string | null;
}): Record<string, string> {
  const offered = opts.topic === true || /\{\{\s*unsubscribeUrl\b/.test(opts.bodySource);
  if (opts.type === 'HEADLESS' || (opts.type === 'TRANSACTIONAL' && !offered)) return {};
  const targets = [`<${opts.unsubscribeUrl}>`];
  if (opts.mailbox) targets.push(`<mailto:${opts.mailbox}?subject=unsubscribe>`);
  return {
    'List-Unsubscribe': targets.join(', '),
    'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
  };
}
