import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows, sql } from '../src/db/query.js';
import { newProject, outboxMessages } from './accounts.js';
import { startTestPigeon, type TestPigeon } from './helpers.js';
import { freePort, onFreePort } from './ports.js';

/**
 * Issue 60, item 2: deploy/nginx/pigeon.conf itself (only its ports and paths replaced) run by
 * Debian's nginx, terminating TLS in front of a real Pigeon: sign-in, a send, a click, the client's
 * own address in the per-IP limits, keep-alive to Pigeon and a large body reaching Pigeon.
 */

const NGINX = process.env.NGINX_PATH ?? '/usr/sbin/nginx';
const SITE = fileURLToPath(new URL('../../../deploy/nginx/pigeon.conf', import.meta.url));
const HOST = 'pigeon.example.com'; // the config's own server_name; never resolved (the test connects to 127.0.0.1)

const hasOpenssl = (() => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const hasNginx = existsSync(NGINX);
if (!hasNginx || !hasOpenssl) {
  console.warn(
    `nginx deployment test skipped: no ${hasNginx ? 'openssl (Debian package openssl)' : `${NGINX} (Debian package nginx)`} on this machine.`,
  );
}

/** The site file with this run's ports and paths; every replaced text must be in it. */
function templateSite(site: string, ports: { https: number; http: number; pigeon: number }, dir: string): string {
  const replacements: Array<[string, string]> = [
    ['server 127.0.0.1:3000;', `server 127.0.0.1:${ports.pigeon};`],
    ['listen 80;', `listen 127.0.0.1:${ports.http};`],
    ['listen [::]:80;', ''],
    ['listen 443 ssl http2;', `listen 127.0.0.1:${ports.https} ssl http2;`],
    ['listen [::]:443 ssl http2;', ''],
    [`/etc/letsencrypt/live/${HOST}/fullchain.pem`, join(dir, 'cert.pem')],
    [`/etc/letsencrypt/live/${HOST}/privkey.pem`, join(dir, 'key.pem')],
    ['/var/log/nginx/', `${dir}/`],
    ['root /var/www/html;', `root ${join(dir, 'www')};`],
  ];
  let text = site;
  for (const [from, to] of replacements) {
    if (!text.includes(from))
      throw new Error(`deploy/nginx/pigeon.conf no longer contains "${from}": update this test`);
    text = text.split(from).join(to);
  }
  return text;
}

/** A main nginx.conf a non-root user can run: pid, logs and temp files in `dir`, the site included. */
const mainConfig = (dir: string) => `
daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 256; }
http {
  access_log ${dir}/access.log;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  include ${dir}/pigeon.conf;
}
`;

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
  json: any;
}

interface CallOptions {
  body?: unknown;
  raw?: Buffer;
  headers?: Record<string, string>;
  /** The client's own address (any of 127.0.0.0/8): nginx sees it as $remote_addr. */
  from?: string;
  /** Plain HTTP to the config's port-80 server instead of HTTPS. */
  plain?: boolean;
}

const tlsUnavailable = !hasNginx || !hasOpenssl;

describe.skipIf(tlsUnavailable)('deploy/nginx/pigeon.conf in front of Pigeon', () => {
  let dir: string;
  let pigeon: TestPigeon;
  let nginx: ChildProcess | undefined;
  let ports: { https: number; http: number; pigeon: number };
  let cert: string;
  let pigeonConnections = 0;

  /** A request through nginx, as a client at `from` (127.0.0.1 by default) would make it. */
  function call(method: string, path: string, opts: CallOptions = {}): Promise<Answer> {
    const payload = opts.raw ?? (opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body)));
    const headers: Record<string, string> = {
      host: opts.plain ? HOST : `${HOST}:${ports.https}`,
      ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(payload ? { 'content-length': String(payload.length) } : {}),
      ...opts.headers,
    };
    const common = { host: '127.0.0.1', method, path, headers, localAddress: opts.from, agent: false } as const;
    return new Promise((resolve, reject) => {
      const req = opts.plain
        ? httpRequest({ ...common, port: ports.http })
        : httpsRequest({ ...common, port: ports.https, servername: HOST, ca: cert });
      req.on('error', reject);
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {}
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      });
      req.end(payload);
    });
  }

  /** The test Pigeon with its `request` going through nginx (for the helpers of accounts.ts). */
  function throughNginx(): TestPigeon {
    return {
      ...pigeon,
      request: async (method, path, init = {}) => {
        const res = await call(method, path, { body: init.body, headers: init.headers });
        const headers = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          for (const v of Array.isArray(value) ? value : [value ?? '']) headers.append(name, v);
        }
        return { status: res.status, headers, body: res.json, text: res.text };
      },
    };
  }

  async function startNginx(): Promise<ChildProcess> {
    writeFileSync(join(dir, 'pigeon.conf'), templateSite(readFileSync(SITE, 'utf8'), ports, dir));
    writeFileSync(join(dir, 'nginx.conf'), mainConfig(dir));
    const args = ['-p', dir, '-e', join(dir, 'error.log'), '-c', join(dir, 'nginx.conf')];
    execFileSync(NGINX, [...args, '-t', '-q'], { stdio: 'pipe' }); // the configuration is valid
    const child = spawn(NGINX, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const exited = new Promise<never>((_resolve, reject) =>
      child.once('exit', () => reject(new Error(`nginx exited: ${stderr}${readLog('error.log')}`))),
    );
    const listening = async () => {
      for (let i = 0; i < 200; i++) {
        if (await canConnect(ports.https)) return;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error('nginx did not listen within 5 s');
    };
    try {
      await Promise.race([listening(), exited]);
    } catch (err) {
      child.kill('SIGKILL');
      throw err;
    }
    exited.catch(() => {}); // its later exit (at the end of the test) is expected
    return child;
  }

  const readLog = (name: string) => {
    try {
      return readFileSync(join(dir, name), 'utf8');
    } catch {
      return '';
    }
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pigeon-nginx-'));
    chmodSync(dir, 0o755); // run as root, nginx's workers are `nobody`: they read www/ and write temp files here
    mkdirSync(join(dir, 'www/.well-known/acme-challenge'), { recursive: true });
    writeFileSync(join(dir, 'www/.well-known/acme-challenge/token-1'), 'acme-proof');
    execFileSync(
      'openssl',
      [
        ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2'],
        ...['-subj', `/CN=${HOST}`, '-addext', `subjectAltName=DNS:${HOST}`],
        ...['-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
      ],
      { stdio: 'pipe' },
    );
    cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
    await onFreePort(async (httpsPort) => {
      const started = await startTestPigeon({
        env: { PUBLIC_URL: `https://${HOST}:${httpsPort}`, TRUST_PROXY: 'loopback' },
      });
      ports = { https: httpsPort, http: await freePort(), pigeon: Number(new URL(started.url).port) };
      try {
        nginx = await startNginx();
      } catch (err) {
        await started.stop();
        throw err;
      }
      pigeon = started;
    });
    pigeon.server?.on('connection', () => {
      pigeonConnections++;
    });
  });

  afterAll(async () => {
    if (nginx && nginx.exitCode === null) {
      const gone = new Promise((r) => nginx?.once('exit', r));
      nginx.kill('SIGQUIT'); // graceful: the master waits for its worker
      const timer = setTimeout(() => nginx?.kill('SIGKILL'), 5_000);
      await gone;
      clearTimeout(timer);
    }
    await pigeon?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('signs in over HTTPS: the session cookie is Secure, and X-Forwarded-Proto reaches Pigeon', async () => {
    const email = `nginx-${process.pid}@example.com`;
    const signup = await call('POST', '/auth/signup', { body: { email, password: 'correct horse battery' } });
    expect(signup.status, signup.text).toBe(201);
    const login = await call('POST', '/auth/login', { body: { email, password: 'correct horse battery' } });
    expect(login.status, login.text).toBe(200);
    const setCookie = (login.headers['set-cookie'] ?? []).find((c) => c.startsWith('pigeon_session='));
    expect(setCookie).toMatch(/;\s*Secure/i);
    expect(setCookie).toMatch(/;\s*HttpOnly/i);
    const cookie = (setCookie ?? '').split(';')[0] ?? '';
    expect((await call('GET', '/users/@me', { headers: { cookie } })).json).toMatchObject({ email });

    // Pigeon's CSRF check takes `${req.protocol}://${Host}` as its own origin: https only when it
    // believes nginx's X-Forwarded-Proto (Host is nginx's $host, without the port).
    const create = (origin: string) =>
      call('POST', '/users/@me/projects', { body: { name: 'Behind nginx' }, headers: { cookie, origin } });
    expect((await create(`https://${HOST}`)).status).toBe(201);
    expect((await create(`http://${HOST}`)).status).toBe(403);
  });

  it('sends, and a tracked link in the mail redirects through nginx and counts the click', async () => {
    const { auth } = await newProject(throughNginx());
    const domain = await call('POST', '/domains', { headers: auth, body: { domain: 'nginx.example' } });
    expect(domain.json).toMatchObject({ domain: 'nginx.example', status: 'verified' }); // the local outbox
    const sent = await call('POST', '/v1/send', {
      headers: auth,
      body: {
        to: 'reader@example.com',
        from: 'hello@nginx.example',
        subject: 'Through nginx',
        body: '<p>Hi</p><p><a href="https://example.com/pricing">Pricing</a></p>',
        tracking: true,
      },
    });
    expect(sent.status, sent.text).toBe(200);
    const emailId: string = sent.json.data.emails[0].email;

    let mail: string | undefined;
    for (let i = 0; i < 400 && !mail; i++) {
      mail = outboxMessages(pigeon).find((m) => m.includes(`<${emailId}@nginx.example>`));
      if (!mail) await new Promise((r) => setTimeout(r, 25));
    }
    expect(mail, 'the mail in the outbox').toBeDefined();
    const publicUrl = `https://${HOST}:${ports.https}`;
    const link = new RegExp(`href="(${publicUrl.replace(/[.]/g, '\\.')}/t/c/[^"]+)"`).exec(mail ?? '')?.[1];
    expect(link, 'a tracked link to PUBLIC_URL').toBeDefined();
    const click = await call('GET', new URL(link ?? '').pathname);
    expect(click.status).toBe(302);
    expect(click.headers.location).toBe('https://example.com/pricing');
    const rows = await queryRows(pigeon.deps.db.pool, sql`SELECT clicks FROM emails WHERE id = ${emailId}`);
    expect(rows[0]?.clicks).toBe(1);
  });

  it("keys the per-IP limit on the client's own address, whatever X-Forwarded-For it sends", async () => {
    const reset = (from: string, forwardedFor?: string) =>
      call('POST', '/auth/request-password-reset', {
        from,
        body: { email: 'nobody@example.com' },
        headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {},
      });
    // 10 password-reset requests per client address in 15 minutes. Client 127.0.0.2 names another
    // address in each request: nginx replaces the header with the real one, so all 10 count for it.
    for (let i = 1; i <= 10; i++) expect((await reset('127.0.0.2', `203.0.113.${i}`)).status).not.toBe(429);
    expect((await reset('127.0.0.2', '198.51.100.99')).status).toBe(429);
    // Another client through the same nginx has its own count (Pigeon does not see nginx's address).
    expect((await reset('127.0.0.3')).status).not.toBe(429);
  });

  it('reuses keep-alive connections to Pigeon', async () => {
    const before = pigeonConnections;
    for (let i = 0; i < 10; i++) expect((await call('GET', '/health')).status).toBe(200);
    expect(pigeonConnections - before).toBeLessThanOrEqual(1); // one nginx worker: at most one new connection
  });

  it('lets a body over 56 MB through to Pigeon, which answers its own 413', async () => {
    const { auth } = await newProject(throughNginx());
    const huge = Buffer.alloc(57 * 1024 * 1024, 0x20); // JSON whitespace
    const res = await call('POST', '/v1/send', { raw: huge, headers: { 'content-type': 'application/json', ...auth } });
    expect(res.status).toBe(413);
    expect(res.json?.error?.code).toBe('PAYLOAD_TOO_LARGE'); // Pigeon's envelope, not nginx's HTML page
  });

  it('redirects plain HTTP to HTTPS and serves the ACME challenge from the web root', async () => {
    const redirect = await call('GET', '/health?x=1', { plain: true });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.location).toBe(`https://${HOST}/health?x=1`);
    const acme = await call('GET', '/.well-known/acme-challenge/token-1', { plain: true });
    expect([acme.status, acme.text]).toEqual([200, 'acme-proof']);
  });
});

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
