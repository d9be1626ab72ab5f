import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { ANCHOR_HREF, decodeAttribute } from './anchors.js';
import { htmlToText, PLACEHOLDER, renderTemplate } from './render.js';

/**
 * A body's text part made once per template rather than once per message: html-to-text runs on
 * the template with every placeholder and every link target replaced by a token, and each message
 * fills the tokens in. A campaign converted its HTML for every recipient (~0.1 ms of a worker's
 * ~1.5 ms per message on this machine; bench/results/2026-11-28-seventeenth-sitting.md).
 *
 * The text is what html-to-text makes of the rendered body, with two differences: lines are wrapped
 * around the tokens, so a line holding a long value can pass 78 columns; and a link target that is
 * only a placeholder shows its value in brackets even when that value is a `#fragment`. Values are
 * put in as html-to-text would show them: whitespace runs as one space, upper case in headings.
 */
interface TextTemplate {
  text: string;
  /** The placeholders (`{{ … }}`) and the link targets, as written in the template, by token number. */
  values: string[];
  links: string[];
}

/** Letters only, unknown to templates: a token is one word to html-to-text. */
const NONCE = Array.from(randomBytes(10), (b) => String.fromCharCode(97 + (b % 26))).join('');
const token = (kind: 'v' | 'l', n: number) => `xq${NONCE}${kind}${n}x`;
const TOKEN = new RegExp(`xq${NONCE}([vl])(\\d+)x`, 'gi');

/**
 * Kept templates, by source (false: one the tokens cannot stand in for), the least recently used
 * dropped past 2M characters of sources, a source of more than 250k never kept: the one-off bodies
 * of `/v1/send` hold a few megabytes at most.
 */
const MAX_CACHED_CHARS = 2_000_000;
const templates = new LRUCache<string, TextTemplate | false>({
  maxSize: MAX_CACHED_CHARS,
  maxEntrySize: MAX_CACHED_CHARS / 8,
  sizeCalculation: (_template, source) => Math.max(1, source.length),
});

/**
 * The text part of `htmlSource` rendered with `vars`. `linkFor` answers what the text shows for a
 * link of the body (its click URL when tracked); `direct` converts the rendered body instead, for a
 * template whose placeholders the tokens cannot stand in for (one inside an attribute's quotes).
 */
export function textPart(
  htmlSource: string,
  vars: Record<string, unknown>,
  linkFor: (link: string) => string,
  direct: () => string,
): string {
  let template = templates.get(htmlSource);
  if (template === undefined) {
    template = textTemplateOf(htmlSource) ?? false;
    templates.set(htmlSource, template);
  }
  return template ? fill(template, vars, linkFor) : direct();
}

function textTemplateOf(source: string): TextTemplate | null {
  const links: string[] = [];
  const linked = source.replace(ANCHOR_HREF, (match, prefix: string, dq?: string, sq?: string) => {
    const target = (dq ?? sq ?? '').trim();
    // html-to-text leaves out `#fragment` targets and shows a mailto's address: kept for it to see.
    if (target.startsWith('#') || /^mailto:/i.test(target)) return match;
    links.push(target);
    return `${prefix}"${token('l', links.length - 1)}"`;
  });
  const values: string[] = [];
  const tokenized = linked.replace(PLACEHOLDER, (placeholder) => {
    values.push(placeholder);
    return token('v', values.length - 1);
  });
  // A placeholder cut by an attribute's quotes (its fallback quoted), or one the pattern does not read.
  const cut = (text: string) => text.replace(PLACEHOLDER, '').includes('{{');
  if (tokenized.includes('{{') || links.some(cut)) return null;
  return { text: htmlToText(tokenized), values, links };
}

function fill(template: TextTemplate, vars: Record<string, unknown>, linkFor: (link: string) => string): string {
  return template.text.replace(TOKEN, (match, kind: string, n: string) => {
    const i = Number(n);
    if (kind === 'l' || kind === 'L') {
      return linkFor(decodeAttribute(renderTemplate(template.links[i] ?? '', vars, { html: true }).trim()));
    }
    const value = renderTemplate(template.values[i] ?? '', vars, { html: false }).replace(/\s+/g, ' ');
    return match === match.toUpperCase() ? value.toUpperCase() : value;
  });
}
