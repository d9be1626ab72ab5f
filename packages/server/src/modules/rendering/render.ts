import { createRequire } from 'node:module';
import { escapeHtml } from '../../mail/system-mail.js';

/**
 * `{{ name }}`, `{{ data.plan }}` and `{{ firstName ?? "there" }}`. Nothing else: no code, no
 * loops, no helpers, so user templates can never run anything.
 */
export const PLACEHOLDER = /\{\{\s*([A-Za-z_$][\w$-]*(?:\.[\w$-]+)*)\s*(?:\?\?\s*"((?:[^"\\]|\\.)*)"\s*)?\}\}/g;

function lookup(vars: Record<string, unknown>, path: string): unknown {
  let value: unknown = vars;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

const asText = (value: unknown): string | undefined =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined;

/** Fills placeholders; unknown or non-scalar values render as their fallback or empty. */
export function renderTemplate(source: string, vars: Record<string, unknown>, opts: { html: boolean }): string {
  return source.replace(PLACEHOLDER, (_match, path: string, fallback: string | undefined) => {
    const value = asText(lookup(vars, path)) ?? (fallback === undefined ? '' : fallback.replace(/\\(.)/g, '$1'));
    return opts.html ? escapeHtml(value) : value;
  });
}

/** Placeholders without a fallback whose variable has no value to show (they would render empty). */
export function missingVariables(sources: string[], vars: Record<string, unknown>): string[] {
  const missing = new Set<string>();
  for (const source of sources) {
    for (const [, path, fallback] of source.matchAll(PLACEHOLDER)) {
      if (path && fallback === undefined && asText(lookup(vars, path)) === undefined) missing.add(path);
    }
  }
  return [...missing];
}

/** Variables that are not contact data: Pigeon fills them itself. */
const BUILT_IN_VARIABLES = new Set([
  'email',
  'id',
  'contact',
  'data',
  'unsubscribeUrl',
  'subscribeUrl',
  'manageUrl',
  'replyToken',
  'pigeon_id',
  'pigeon_email',
]);

/** The contact data fields (`data.<path>`) a template's placeholders read, for the reference index. */
export function dataFieldsUsed(...sources: string[]): string[] {
  const fields = new Set<string>();
  for (const source of sources) {
    for (const [, path] of source.matchAll(PLACEHOLDER)) {
      const inData = path?.startsWith('data.') ? path.slice(5) : path;
      if (!inData || (inData === path && BUILT_IN_VARIABLES.has(inData.split('.')[0] ?? ''))) continue;
      fields.add(`data.${inData}`);
    }
  }
  return [...fields];
}

/** Subjects are plain text on one line, whatever the variables held. */
export const renderSubject = (source: string, vars: Record<string, unknown>) =>
  renderTemplate(source, vars, { html: false })
    .replace(/[\r\n]+/g, ' ')
    .slice(0, 998);

const load = createRequire(import.meta.url);
let toText: ((html: string) => string) | undefined;

/**
 * The text part of an HTML message. html-to-text (5.5 MB with its parsers) loads with the first
 * message that needs it, not with every process (docs/MEMORY.md); compiled once, since `convert`
 * rebuilds its selector machinery on every call (~280 µs against ~5 µs).
 */
export function htmlToText(html: string): string {
  toText ??= (load('html-to-text') as typeof import('html-to-text')).compile({
    wordwrap: 78,
    selectors: [{ selector: 'img', format: 'skip' }],
  });
  return toText(html);
}
