import { randomBytes } from 'node:crypto';
import type MarkdownIt from 'markdown-it';
import { PLACEHOLDER } from './render.js';

/**
 * CommonMark with links made from bare URLs; `html: false` escapes raw HTML instead of passing it on.
 * Loaded with the first Markdown body, not in every process at start.
 */
let markdown: Promise<InstanceType<typeof MarkdownIt>> | undefined;
const markdownIt = () => {
  markdown ??= import('markdown-it').then(({ default: Md }) => new Md({ html: false, linkify: true }));
  return markdown;
};

/**
 * A `/v1/send` body written in Markdown (Plunk's `type: "markdown"`) → HTML. Raw HTML in it is
 * escaped and unsafe link schemes (javascript:, vbscript:, file:, most data:) are dropped by
 * markdown-it. Placeholders are swapped for inert tokens first, so `{{name}}` in text and
 * `[Unsubscribe]({{unsubscribeUrl}})` in links reach the per-recipient rendering as written
 * (markdown-it would otherwise percent-encode them in URLs and escape the quotes of a fallback).
 */
export async function markdownToHtml(source: string): Promise<string> {
  const placeholders: string[] = [];
  const nonce = randomBytes(6).toString('hex');
  const token = (i: number) => `pigeonph${nonce}x${i}x`;
  const shielded = source.replace(PLACEHOLDER, (match) => token(placeholders.push(match) - 1));
  const html = (await markdownIt()).render(shielded);
  return html.replace(new RegExp(`pigeonph${nonce}x(\\d+)x`, 'g'), (_m, i: string) => placeholders[Number(i)] ?? '');
}
