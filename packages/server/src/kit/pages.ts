import type { ServerResponse } from 'node:http';
import { Eta } from 'eta';
import type { Response } from 'express';

/**
 * Pigeon's own HTML pages (subscription pages, sign-in, outbox viewer), rendered with eta.
 * Never used for customer templates: eta runs JavaScript. Views are registered by the modules
 * that own them; every value is HTML-escaped unless a view writes `<%~ %>` on purpose.
 */
const eta = new Eta({ autoEscape: true, autoTrim: false, cache: true });

const LAYOUT = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title><%= it.title %><% if (it.projectName) { %> · <%= it.projectName %><% } %></title>
<style>
  :root { color-scheme: light dark; --fg: #1a1a1a; --bg: #f6f6f4; --card: #fff; --muted: #555; --accent: #1f5fbf; --line: #ddd; }
  @media (prefers-color-scheme: dark) { :root { --fg: #eee; --bg: #161616; --card: #222; --muted: #bbb; --accent: #8db4ff; --line: #444; } }
  * { box-sizing: border-box; }
  body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
  main { max-width: <%= it.wide ? '72rem' : '32rem' %>; margin: 3rem auto; padding: 2rem; background: var(--card); border: 1px solid var(--line); border-radius: 8px; }
  h1 { font-size: 1.4rem; margin: 0 0 1rem; }
  p { margin: 0 0 1rem; }
  .muted { color: var(--muted); font-size: .9rem; }
  button, .button { font: inherit; padding: .6rem 1.2rem; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent); color: var(--card); cursor: pointer; text-decoration: none; display: inline-block; }
  button.secondary { background: transparent; color: var(--accent); }
  button:focus-visible, a:focus-visible, input:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
  a { color: var(--accent); }
  label { display: block; margin: 0 0 .25rem; font-weight: 600; }
  input { font: inherit; width: 100%; padding: .5rem; margin: 0 0 1rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
  table { width: 100%; border-collapse: collapse; font-size: .9rem; }
  th, td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; overflow-wrap: anywhere; }
  pre { white-space: pre-wrap; overflow-wrap: anywhere; font-size: .8rem; background: var(--bg); padding: 1rem; border-radius: 6px; }
  iframe { width: 100%; min-height: 32rem; border: 1px solid var(--line); border-radius: 6px; background: #fff; }
  .error { color: #b00020; }
  @media (max-width: 36rem) { main { margin: 0; border-radius: 0; border: 0; padding: 1.25rem; } }
</style>
</head>
<body>
<main>
<%~ it.body %>
</main>
</body>
</html>
`;
eta.loadTemplate('@layout', LAYOUT);

/** Registers a view; its source starts with `<% layout('@layout') %>` to get the shared page. */
export function definePage(name: string, source: string): void {
  eta.loadTemplate(`@${name}`, source);
}

export interface PageData {
  title: string;
  projectName?: string;
  wide?: boolean;
  [key: string]: unknown;
}

/** Tokens live in these URLs, so nothing is cached and no Referer leaves the page. */
const PAGE_HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-src 'self'; frame-ancestors 'none'",
};

/** Sends a page. */
export function sendPage(res: Response, status: number, name: string, data: PageData): void {
  res
    .status(status)
    .set(PAGE_HEADERS)
    .send(eta.render(`@${name}`, data));
}

/** The same on a bare node response (routes answered outside express: `http/fast-routes.ts`). */
export function writePage(res: ServerResponse, status: number, name: string, data: PageData, head = false): void {
  const body = eta.render(`@${name}`, data);
  res.writeHead(status, { ...PAGE_HEADERS, 'Content-Length': Buffer.byteLength(body) });
  res.end(head ? undefined : body);
}
