/**
 * A browser reduced to what sign-in flows need, over plain HTTP: a cookie jar (per host and port,
 * honouring Path, Max-Age and Expires), manual redirects with the chain recorded, and HTML forms
 * submitted the way a person's click would.
 */
export interface Visit {
  status: number;
  url: string;
  /** Where the last response pointed, when it was a redirect not followed (`stopBefore`). */
  location: string | undefined;
  headers: Headers;
  text: string;
  /** Every URL visited on the way, with its status, the last one included. */
  chain: { url: string; status: number }[];
  /** Cookies set along the way, by name (the last value; '' when one was deleted). */
  setCookies: Map<string, string>;
}

export interface VisitOptions {
  method?: string;
  body?: URLSearchParams;
  /** Do not follow a redirect to this URL (the visit ends with the redirect response). */
  stopBefore?: (url: URL) => boolean;
}

interface StoredCookie {
  value: string;
  path: string;
  expires: number | undefined;
}

export class HttpBrowser {
  private readonly jar = new Map<string, Map<string, StoredCookie>>();

  /** Opens a URL like a typed address or a clicked link and follows redirects (at most `maxHops`). */
  async visit(url: string, init: VisitOptions = {}): Promise<Visit> {
    const chain: Visit['chain'] = [];
    const setCookies = new Map<string, string>();
    let current = new URL(url);
    let method = init.method ?? 'GET';
    let body: URLSearchParams | undefined = init.body;
    for (let hop = 0; ; hop++) {
      const res = await fetch(current, {
        method,
        body,
        redirect: 'manual',
        headers: { cookie: this.cookieHeader(current), 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate' },
      });
      for (const [name, value] of this.store(current, res.headers.getSetCookie())) setCookies.set(name, value);
      chain.push({ url: current.href, status: res.status });
      const location = res.headers.get('location');
      const next = location ? new URL(location, current) : undefined;
      if (res.status >= 300 && res.status < 400 && next && hop < 20 && !init.stopBefore?.(next)) {
        await res.arrayBuffer();
        current = next;
        if (res.status !== 307 && res.status !== 308) {
          method = 'GET';
          body = undefined;
        }
        continue;
      }
      return {
        status: res.status,
        url: current.href,
        location: next?.href,
        headers: res.headers,
        text: await res.text(),
        chain,
        setCookies,
      };
    }
  }

  /** Submits the page's first POST form, with its hidden fields and the given ones filled in. */
  async submitForm(page: Visit, fields: Record<string, string> = {}, options: VisitOptions = {}): Promise<Visit> {
    const form = /<form\b[^>]*>([\s\S]*?)<\/form>/i.exec(page.text);
    if (!form) throw new Error(`no form on ${page.url}:\n${page.text.slice(0, 500)}`);
    const action = /action="([^"]*)"/i.exec(form[0])?.[1] ?? page.url;
    const values = new URLSearchParams();
    for (const input of form[1]?.matchAll(/<input\b[^>]*>/gi) ?? []) {
      const name = /name="([^"]*)"/i.exec(input[0])?.[1];
      if (name && !(name in fields)) values.set(name, /value="([^"]*)"/i.exec(input[0])?.[1] ?? '');
    }
    for (const [name, value] of Object.entries(fields)) values.set(name, value);
    return this.visit(new URL(decodeEntities(action), page.url).href, { ...options, method: 'POST', body: values });
  }

  cookie(url: string, name: string): string | undefined {
    return this.jar.get(new URL(url).host)?.get(name)?.value;
  }

  setCookie(url: string, name: string, value: string, path = '/'): void {
    const host = new URL(url).host;
    const cookies = this.jar.get(host) ?? new Map<string, StoredCookie>();
    cookies.set(name, { value, path, expires: undefined });
    this.jar.set(host, cookies);
  }

  private cookieHeader(url: URL): string {
    const now = Date.now();
    return [...(this.jar.get(url.host) ?? new Map<string, StoredCookie>())]
      .filter(([, c]) => (c.expires === undefined || c.expires > now) && pathMatches(url.pathname, c.path))
      .map(([name, c]) => `${name}=${c.value}`)
      .join('; ');
  }

  private store(url: URL, headers: string[]): [string, string][] {
    const cookies = this.jar.get(url.host) ?? new Map<string, StoredCookie>();
    this.jar.set(url.host, cookies);
    const stored: [string, string][] = [];
    for (const header of headers) {
      const [pair = '', ...attributes] = header.split(';').map((p) => p.trim());
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      const attr = (key: string) =>
        attributes.find((a) => a.toLowerCase().startsWith(`${key}=`))?.slice(key.length + 1) ?? undefined;
      const maxAge = attr('max-age');
      const expiresAt = attr('expires');
      const expires =
        maxAge !== undefined
          ? Date.now() + Number(maxAge) * 1000
          : expiresAt !== undefined
            ? Date.parse(expiresAt)
            : undefined;
      const path = attr('path') ?? '/';
      if (expires !== undefined && expires <= Date.now()) {
        cookies.delete(name);
        stored.push([name, '']);
      } else {
        cookies.set(name, { value, path, expires });
        stored.push([name, value]);
      }
    }
    return stored;
  }
}

const pathMatches = (requestPath: string, cookiePath: string) =>
  requestPath === cookiePath ||
  (requestPath.startsWith(cookiePath) && (cookiePath.endsWith('/') || requestPath[cookiePath.length] === '/'));

const decodeEntities = (s: string) =>
  s
    .replace(/&amp;/g, '&')
    .replace(/&#x2F;/gi, '/')
    .replace(/&#47;/g, '/');
