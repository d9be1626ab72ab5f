import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject } from '../accounts.js';
import { api, bodyOf } from '../api.js';
import { expectEnvelope, startTestPigeon, type TestPigeon } from '../helpers.js';
import { allRoutes, authOf, changedTables, fingerprint, isWrite, realPath } from './contract-routes.js';

/**
 * CSRF (DESIGN.md §9, issue 24): every route of the contract that changes state and can act with
 * the session cookie gets, with the owner's cookie, the requests a page of another origin can make
 * without a CORS preflight: a form post, a text/plain fetch, from another site, from a sibling of
 * the same site (`SameSite=Lax` still sends the cookie there), from a sandboxed frame. None may be
 * accepted, and no row may change.
 */

let pigeon: TestPigeon;
let setup: Awaited<ReturnType<typeof newProject>>;
const ids: Record<string, string> = {};

beforeAll(async () => {
  pigeon = await startTestPigeon({ role: 'api', env: { RATE_LIMIT_PER_MINUTE: '0' } });
  setup = await newProject(pigeon);
  ids.project = setup.project.id;
  ids.user = setup.owner.user.id;
  const client = api(pigeon, setup.auth);
  ids.domains = bodyOf(await client.domains.create({ body: { domain: `csrf-${process.pid}.example.com` } }), 201).id;
  const contact = await client.contacts.create({ body: { email: 'someone@example.com', data: { plan: 'pro' } } });
  ids.contacts = bodyOf(contact, 201).id;
  const template = await client.templates.create({
    body: { name: 'T', subject: 'Hi', body: '<p>Hi</p>', from: `hello@csrf-${process.pid}.example.com` },
  });
  ids.templates = bodyOf(template, 201).id;
  const workflow = await client.workflows.create({ body: { name: 'W', triggerConfig: { eventName: 'signup' } } });
  ids.workflows = bodyOf(workflow, 201).id;
  const step = await client.workflows.addStep({ params: { id: ids.workflows }, body: { type: 'EXIT' } });
  ids.step = bodyOf(step, 201).id;
}, 60_000);
afterAll(() => pigeon?.stop());

const FOREIGN = 'https://evil.example';

/** What a page of another origin can send without a preflight, each with the victim's cookie. */
const FORGED: Record<string, { headers: Record<string, string>; body: string }> = {
  'form from another site': {
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: FOREIGN,
      'sec-fetch-site': 'cross-site',
    },
    body: 'name=pwned&email=a%40b.example',
  },
  'text/plain from another site (no Fetch Metadata: Origin decides)': {
    headers: { 'content-type': 'text/plain', origin: FOREIGN },
    body: '{"name":"pwned"}',
  },
  'text/plain from a sibling on the same site': {
    headers: { 'content-type': 'text/plain', origin: 'http://127.0.0.1:1', 'sec-fetch-site': 'same-site' },
    body: '{"name":"pwned"}',
  },
  'form from a sandboxed frame (Origin: null)': {
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'null' },
    body: 'name=pwned',
  },
  'no body from another site': {
    headers: { origin: FOREIGN, 'sec-fetch-site': 'cross-site' },
    body: '',
  },
};

const COOKIE_AUTH = new Set(['session', 'project', 'dashboard', 'none']);

describe('cross-site requests with the session cookie', () => {
  it('accepts none on any route that changes state, and changes no row', async () => {
    // The inbound webhooks (Stripe, SNS) are signed by their senders and never read the cookie.
    const routes = allRoutes().filter(
      ([, route]) => isWrite(route) && COOKIE_AUTH.has(authOf(route)) && !route.path.startsWith('/webhooks/'),
    );
    expect(routes.length).toBeGreaterThan(50);
    const before = await fingerprint(pigeon.deps.db.pool);
    const answers: Array<{ probe: string; status: number }> = [];
    for (const [name, route] of routes) {
      for (const [what, forged] of Object.entries(FORGED)) {
        // untyped: every route (forged cross-site forms and raw bodies)
        const res = await pigeon.request(route.method, realPath(route.path, ids), {
          headers: { cookie: setup.owner.cookie, 'x-project-id': setup.project.id, ...forged.headers },
          rawBody: forged.body || undefined,
        });
        answers.push({ probe: `${name}: ${what}`, status: res.status });
        expect(expectEnvelope(res, 403, 'FORBIDDEN').message, `${name}: ${what}`).toMatch(/another site/);
      }
    }
    console.info(`csrf: ${answers.length} forged requests over ${routes.length} routes`);
    expect(answers.filter((a) => a.status < 300)).toEqual([]);
    expect(changedTables(before, await fingerprint(pigeon.deps.db.pool))).toEqual([]);
  }, 120_000);

  it("accepts the same requests from Pigeon's own origin, typed by the person, or from a client that is not a browser", async () => {
    const { owner, project } = await newProject(pigeon);
    const rotate = (headers: Record<string, string>) =>
      api(pigeon, { cookie: owner.cookie, ...headers }).users.regenerateKeys({ params: { id: project.id } });
    expect((await rotate({ 'sec-fetch-site': 'same-origin', origin: pigeon.url })).status).toBe(200);
    expect((await rotate({ 'sec-fetch-site': 'none' })).status).toBe(200);
    expect((await rotate({ origin: pigeon.url })).status).toBe(200);
    expect((await rotate({})).status).toBe(200);
    // A cross-site read is not refused here (it changes nothing; SameSite and CORS govern it).
    const read = await api(pigeon, {
      cookie: owner.cookie,
      origin: FOREIGN,
      'sec-fetch-site': 'cross-site',
    }).users.me();
    expect(read.status).toBe(200);
  });

  it('GET /auth/logout (the spec keeps it) cannot be made by another site: the session survives a link or an image elsewhere', async () => {
    const { owner } = await newProject(pigeon);
    const me = () => api(pigeon, { cookie: owner.cookie }).users.me();
    for (const site of ['cross-site', 'same-site']) {
      const forged = await api(pigeon, { cookie: owner.cookie, 'sec-fetch-site': site, origin: FOREIGN }).auth.logout();
      expectEnvelope(forged, 403, 'FORBIDDEN');
      expect((await me()).status).toBe(200);
    }
    // The person's own navigation (typed, or from Pigeon's pages) signs out.
    const own = await api(pigeon, { cookie: owner.cookie, 'sec-fetch-site': 'none' }).auth.logout();
    expect(own.status).toBe(200);
    expect((await me()).status).toBe(401);
  });

  it('leaves API-key requests alone, whatever their origin', async () => {
    const { auth, owner } = await newProject(pigeon);
    const foreign = { origin: FOREIGN, 'sec-fetch-site': 'cross-site' };
    const withKey = await api(pigeon, { ...auth, ...foreign }).contacts.create({
      body: { email: 'keyed@example.com' },
    });
    expect(withKey.status).toBe(201);
    // A dashboard route with both a key and a cookie acts with the key: not refused either.
    const both = await api(pigeon, { ...auth, ...foreign, cookie: owner.cookie }).contacts.create({
      body: { email: 'both@example.com' },
    });
    expect(both.status).toBe(201);
  });
});
