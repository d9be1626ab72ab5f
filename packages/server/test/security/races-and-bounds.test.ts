import { MAX_PAGE } from '@pigeon/contract';
import type { AppRoute } from '@ts-rest/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows, sql } from '../../src/db/query.js';
import { newProject, signUp, uniqueEmail } from '../accounts.js';
import { api } from '../api.js';
import { expectEnvelope, startTestPigeon, type TestPigeon, type TestResponse } from '../helpers.js';
import { imageFixture } from '../uploads.js';
import {
  allRoutes,
  authOf,
  changedTables,
  declaredStatuses,
  fingerprint,
  isWrite,
  keysOf,
  realPath,
} from './contract-routes.js';

/**
 * Races and bounds over the contract (issue 24):
 * - two identical requests at once to every route that creates something (every route with a
 *   201 answer; the table below must name each), and to the writes that race on a unique value;
 * - numbers no page can have and names of `Object.prototype`'s properties in every query
 *   parameter of every route;
 * - broken multipart bodies to every route that writes.
 * Nothing may answer 5xx; every answer is one the route declares.
 */

let pigeon: TestPigeon;
let owner: Awaited<ReturnType<typeof newProject>>['owner'];
let project: Awaited<ReturnType<typeof newProject>>['project'];
let auth: Record<string, string>;
const ids: Record<string, string> = {};
const domain = `races-${process.pid}.example.com`;
const from = `hello@${domain}`;

/** The id of what a call created (201, or 200 for an upsert). */
async function created(call: Promise<{ status: number; body: unknown }>): Promise<string> {
  const res = await call;
  if (res.status !== 201 && res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
  const body = res.body as { id?: string; data?: { id?: string } };
  return body.data?.id ?? body.id ?? '';
}

const template = () => ({ name: 'Same template', subject: 'Hi', body: '<p>Hi</p>', from });
const campaign = () => ({
  name: 'Same campaign',
  subject: 'Hi',
  body: '<p>Hi</p>',
  from,
  audienceType: 'ALL' as const,
});
const workflow = () => ({ name: 'Same workflow', triggerConfig: { eventName: 'signup' } });

beforeAll(async () => {
  // API role: no worker changes rows behind the tables' backs; the local outbox verifies domains at once.
  pigeon = await startTestPigeon({ role: 'api', env: { RATE_LIMIT_PER_MINUTE: '0' } });
  ({ owner, project, auth } = await newProject(pigeon));
  ids.project = project.id;
  ids.user = owner.user.id;
  ids.domains = await created(api(pigeon, auth).domains.create({ body: { domain } }));
  const email = uniqueEmail('contact');
  ids.contacts = await created(api(pigeon, auth).contacts.create({ body: { email, data: { plan: 'pro' } } }));
  ids.templates = await created(api(pigeon, auth).templates.create({ body: template() }));
  ids.segments = await created(api(pigeon, auth).segments.create({ body: { name: 'Bounds', type: 'STATIC' } }));
  await api(pigeon, auth).segments.addMembers({ params: { id: ids.segments }, body: { emails: [email] } });
  ids.campaigns = await created(api(pigeon, auth).campaigns.create({ body: campaign() }));
  ids.workflows = await created(api(pigeon, auth).workflows.create({ body: workflow() }));
  ids.step = await created(
    api(pigeon, auth).workflows.addStep({ params: { id: ids.workflows }, body: { type: 'EXIT', name: 'end' } }),
  );
  // A workflow of its own for executions (the step race adds steps to the one above).
  ids.runnable = await created(api(pigeon, auth).workflows.create({ body: workflow() }));
  await created(
    api(pigeon, auth).workflows.addStep({ params: { id: ids.runnable }, body: { type: 'EXIT', name: 'end' } }),
  );
}, 60_000);
afterAll(() => pigeon?.stop());

function headersFor(route: AppRoute): Record<string, string> {
  const kind = authOf(route);
  if (kind === 'none') return {};
  if (kind === 'session') return { cookie: owner.cookie };
  if (kind === 'track') return { authorization: `Bearer ${project.publicKey}` };
  return auth;
}

// ---------------------------------------------------------------------------------------------
// Two identical requests at once

interface Race {
  /** The contract route's dotted name. */
  route: string;
  label: string;
  /** The statuses the two answers may have, sorted (one pair, or several when either is right). */
  expected: Array<[number, number]>;
  /** Sets up what the pair needs (fresh each round) and returns the two requests. */
  prepare: () => Promise<[RaceRequest, RaceRequest]>;
}

interface RaceRequest {
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Sent as the multipart field `file` instead of a JSON body. */
  file?: Buffer;
}

const twice = (req: RaceRequest): [RaceRequest, RaceRequest] => [req, req];

async function send(method: string, req: RaceRequest): Promise<TestResponse> {
  // untyped: every route (a path of the race table)
  if (!req.file) return pigeon.request(method, req.path, { headers: req.headers ?? auth, body: req.body });
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(req.file)], { type: 'image/png' }), 'logo.png');
  const res = await fetch(`${pigeon.url}${req.path}`, { method, headers: req.headers ?? auth, body: form });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined, text };
}

let round = 0;
const RACES: Race[] = [
  {
    route: 'auth.signup',
    label: 'one address',
    expected: [[201, 409]],
    prepare: async () =>
      twice({
        path: '/auth/signup',
        headers: {},
        body: { email: uniqueEmail('race'), password: 'correct horse battery' },
      }),
  },
  {
    route: 'users.createProject',
    label: 'one name (names are not unique)',
    expected: [[201, 201]],
    prepare: async () =>
      twice({ path: '/users/@me/projects', headers: { cookie: owner.cookie }, body: { name: 'Same' } }),
  },
  {
    route: 'projects.inviteMember',
    // Inviting again replaces the pending invitation; at the same moment, one may meet the other's row.
    label: 'an address without an account (one pending invitation)',
    expected: [
      [201, 201],
      [201, 409],
    ],
    prepare: async () =>
      twice({
        path: `/projects/${project.id}/members`,
        headers: { cookie: owner.cookie },
        body: { email: uniqueEmail('invitee'), role: 'MEMBER' },
      }),
  },
  {
    route: 'projects.inviteMember',
    label: 'an existing user (one membership)',
    expected: [[201, 409]],
    prepare: async () => {
      const user = await signUp(pigeon);
      return twice({
        path: `/projects/${project.id}/members`,
        headers: { cookie: owner.cookie },
        body: { email: user.user.email, role: 'MEMBER' },
      });
    },
  },
  {
    route: 'contacts.create',
    label: 'one email (an upsert: one creates, one updates)',
    expected: [[200, 201]],
    prepare: async () => twice({ path: '/contacts', body: { email: uniqueEmail('contact'), data: { plan: 'pro' } } }),
  },
  {
    route: 'contacts.update',
    label: 'two contacts taking one email',
    expected: [[200, 409]],
    prepare: async () => {
      const email = uniqueEmail('wanted');
      const a = await created(api(pigeon, auth).contacts.create({ body: { email: uniqueEmail('a') } }));
      const b = await created(api(pigeon, auth).contacts.create({ body: { email: uniqueEmail('b') } }));
      return [
        { path: `/contacts/${a}`, body: { email } },
        { path: `/contacts/${b}`, body: { email } },
      ];
    },
  },
  {
    route: 'domains.create',
    label: 'one domain',
    expected: [[201, 409]],
    prepare: async () => twice({ path: '/domains', body: { domain: `d${++round}-${process.pid}.example.org` } }),
  },
  {
    route: 'webhookEndpoints.create',
    // Disabled, so nothing is ever delivered to the (unresolvable) name.
    label: 'one URL (endpoints are not unique)',
    expected: [[201, 201]],
    prepare: async () =>
      twice({
        path: '/webhook-endpoints',
        body: { url: `https://hooks-${++round}.example.invalid/pigeon`, eventTypes: ['email.*'], enabled: false },
      }),
  },
  {
    route: 'inboundRoutes.create',
    label: 'one domain and pattern',
    expected: [[201, 409]],
    prepare: async () =>
      twice({ path: '/inbound-routes', body: { domain, pattern: `support${++round}`, action: 'RECORD' } }),
  },
  {
    route: 'topics.create',
    label: 'one name',
    expected: [[201, 409]],
    prepare: async () => twice({ path: '/topics', body: { name: `Topic ${++round}`, defaultSubscription: 'OPT_IN' } }),
  },
  {
    route: 'trackingDomains.create',
    label: 'one per sender domain',
    expected: [[201, 409]],
    prepare: async () => {
      const sender = `trk${++round}-${domain}`;
      await created(api(pigeon, auth).domains.create({ body: { domain: sender } }));
      return twice({ path: '/tracking-domains', body: { domain: `links.${sender}` } });
    },
  },
  {
    route: 'templates.create',
    label: 'one name',
    expected: [[201, 201]],
    prepare: async () => twice({ path: '/templates', body: template() }),
  },
  {
    route: 'templates.duplicate',
    label: 'one template',
    expected: [[201, 201]],
    prepare: async () => twice({ path: `/templates/${ids.templates}/duplicate` }),
  },
  {
    route: 'segments.create',
    label: 'one name (the second gets the next slug)',
    expected: [[201, 201]],
    prepare: async () => twice({ path: '/segments', body: { name: `Same segment ${++round}`, type: 'STATIC' } }),
  },
  {
    route: 'campaigns.create',
    label: 'one name',
    expected: [[201, 201]],
    prepare: async () => twice({ path: '/campaigns', body: campaign() }),
  },
  {
    route: 'campaigns.duplicate',
    label: 'one campaign',
    expected: [[201, 201]],
    prepare: async () => twice({ path: `/campaigns/${ids.campaigns}/duplicate` }),
  },
  {
    route: 'workflows.create',
    label: 'one name',
    expected: [[201, 201]],
    prepare: async () => twice({ path: '/workflows', body: workflow() }),
  },
  {
    route: 'workflows.addStep',
    label: 'one step name',
    expected: [[201, 201]],
    prepare: async () => twice({ path: `/workflows/${ids.workflows}/steps`, body: { type: 'EXIT', name: 'same' } }),
  },
  {
    route: 'workflows.addTransition',
    label: 'one way out of a step',
    expected: [[201, 409]],
    prepare: async () => {
      const wf = await created(api(pigeon, auth).workflows.create({ body: workflow() }));
      const a = await created(
        api(pigeon, auth).workflows.addStep({
          params: { id: wf },
          body: {
            type: 'DELAY',
            config: { amount: 1, unit: 'hours' },
          },
        }),
      );
      const b = await created(api(pigeon, auth).workflows.addStep({ params: { id: wf }, body: { type: 'EXIT' } }));
      return twice({ path: `/workflows/${wf}/transitions`, body: { fromStepId: a, toStepId: b } });
    },
  },
  {
    route: 'workflows.startExecution',
    label: 'one contact (re-entry off: one active execution)',
    expected: [[201, 409]],
    prepare: async () => {
      const contactId = await created(api(pigeon, auth).contacts.create({ body: { email: uniqueEmail('runner') } }));
      return twice({ path: `/workflows/${ids.runnable}/executions`, body: { contactId } });
    },
  },
  {
    route: 'uploads.image',
    label: 'one image (stored once, by content)',
    expected: [[200, 201]],
    prepare: async () => {
      // A different PNG each round: the same bytes plus a trailing comment chunk would be another file.
      const png = Buffer.concat([imageFixture('logo.png'), Buffer.from(`round ${++round}`)]);
      return twice({ path: '/uploads/image', file: png });
    },
  },
  {
    route: 'events.track',
    label: 'one Idempotency-Key',
    expected: [[200, 409]],
    prepare: async () =>
      twice({
        path: '/v1/track',
        headers: { authorization: `Bearer ${project.publicKey}`, 'idempotency-key': crypto.randomUUID() },
        body: { event: 'race', email: uniqueEmail('tracked') },
      }),
  },
  {
    route: 'emails.send',
    label: 'one Idempotency-Key',
    expected: [[200, 409]],
    prepare: async () =>
      twice({
        path: '/v1/send',
        headers: { ...auth, 'idempotency-key': crypto.randomUUID() },
        body: { to: uniqueEmail('to'), from, subject: 'Hi', body: '<p>Hi</p>' },
      }),
  },
];

const ROUNDS = 3;

describe('two identical requests at once', () => {
  it('names every route of the contract that creates something', () => {
    const creates = allRoutes()
      .filter(([, route]) => declaredStatuses(route).includes(201))
      .map(([name]) => name);
    expect(creates.length).toBeGreaterThan(10);
    const covered = new Set(RACES.map((r) => r.route));
    expect(creates.filter((name) => !covered.has(name))).toEqual([]);
  });

  it('answers every pair without a 5xx: both succeed, or one and a 409 in the envelope', async () => {
    const routes = new Map(allRoutes());
    const outcomes: Array<{ race: string; statuses: number[] }> = [];
    const undeclared: string[] = [];
    for (const race of RACES) {
      const route = routes.get(race.route) as AppRoute;
      for (let i = 0; i < ROUNDS; i++) {
        const pair = await race.prepare();
        const answers = await Promise.all(pair.map((req) => send(route.method, req)));
        for (const answer of answers) {
          if (!declaredStatuses(route).includes(answer.status)) undeclared.push(`${race.route}: ${answer.text}`);
          if (answer.status === 409) {
            const error = expectEnvelope(answer, 409, answer.body?.error?.code);
            expect(['CONFLICT', 'IDEMPOTENCY_KEY_REUSED']).toContain(error.code);
          }
        }
        outcomes.push({ race: `${race.route} (${race.label})`, statuses: answers.map((a) => a.status).sort() });
      }
    }
    console.info(`races: ${outcomes.length} pairs, ${outcomes.length * 2} requests over ${RACES.length} cases`);
    expect(outcomes.flatMap((o) => o.statuses).filter((s) => s >= 500)).toEqual([]);
    expect(undeclared).toEqual([]);
    const allowed = new Map(RACES.map((race) => [`${race.route} (${race.label})`, race.expected.map(String)]));
    expect(outcomes.filter((o) => !allowed.get(o.race)?.includes(String(o.statuses)))).toEqual([]);
    expect(outcomes.length).toBe(RACES.length * ROUNDS);
  }, 120_000);

  it('leaves one row where a value is unique, and gives same-named segments different slugs', async () => {
    const email = uniqueEmail('counted');
    await Promise.all([0, 1, 2, 3].map(() => send('POST', { path: '/contacts', body: { email } })));
    const rows = await queryRows(
      pigeon.deps.db.pool,
      sql`SELECT count(*)::int AS n FROM contacts WHERE project_id = ${project.id} AND email = ${email}`,
    );
    expect(rows[0]?.n).toBe(1);
    const segments = await Promise.all(
      [0, 1, 2, 3].map(() => send('POST', { path: '/segments', body: { name: 'Quad', type: 'STATIC' } })),
    );
    expect(segments.map((s) => s.status)).toEqual([201, 201, 201, 201]);
    expect(segments.map((s) => s.body.slug).sort()).toEqual(['quad', 'quad-2', 'quad-3', 'quad-4']);
  });
});

// ---------------------------------------------------------------------------------------------
// Bounds: numbers and prototype names in every query parameter

const NUMBERS = [
  '99999999999999999999999',
  '-99999999999999999999999',
  '1e400',
  '9007199254740993',
  String(MAX_PAGE + 1),
  '-1',
  '0',
  '1.5',
  'NaN',
  'Infinity',
];
const PROTOTYPE_NAMES = [
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '__defineGetter__',
  'prototype',
];

describe('bounds over every query parameter of the contract', () => {
  it('answers no 5xx to numbers no page has and to Object.prototype names, and changes no row', async () => {
    const routes = allRoutes().filter(([, route]) => keysOf((route as { query?: unknown }).query).length > 0);
    expect(routes.length).toBeGreaterThan(10);
    const before = await fingerprint(pigeon.deps.db.pool);
    const answers: Array<{ probe: string; status: number }> = [];
    const undeclared: string[] = [];
    for (const [name, route] of routes) {
      for (const key of keysOf((route as { query?: unknown }).query)) {
        for (const value of [...NUMBERS, ...PROTOTYPE_NAMES]) {
          // untyped: every route (a query of the contract, out of bounds on purpose)
          const res = await pigeon.request(route.method, `${realPath(route.path, ids)}?${key}=${value}`, {
            headers: headersFor(route),
          });
          answers.push({ probe: `${name} ${key}=${value}`, status: res.status });
          if (!declaredStatuses(route).includes(res.status)) undeclared.push(`${name} ${key}=${value}: ${res.status}`);
        }
      }
    }
    console.info(`bounds: ${answers.length} requests over ${routes.length} routes`);
    expect(answers.filter((a) => a.status >= 500)).toEqual([]);
    expect(undeclared).toEqual([]);
    expect(changedTables(before, await fingerprint(pigeon.deps.db.pool))).toEqual([]);
  }, 120_000);

  it(`answers 422 naming "page" beyond page ${MAX_PAGE}, and an empty page at it`, async () => {
    for (const path of ['/templates', '/campaigns', `/segments/${ids.segments}/contacts`]) {
      for (const page of ['99999999999999999999999', String(MAX_PAGE + 1)]) {
        // untyped: wrong on purpose (a page past the bound, over a list of paths)
        const res = await pigeon.request('GET', `${path}?page=${page}`, { headers: auth });
        const error = expectEnvelope(res, 422, 'VALIDATION_ERROR');
        expect(error.errors?.map((e) => e.field)).toEqual(['page']);
      }
      // untyped: every route (one list query for a list of paths)
      const last = await pigeon.request('GET', `${path}?page=${MAX_PAGE}&pageSize=100`, { headers: auth });
      expect(last.status).toBe(200);
      expect(last.body.data).toEqual([]);
    }
  });

  it('treats prototype names as unrecognised sort keys: the default order, as the spec says', async () => {
    await created(api(pigeon, auth).campaigns.create({ body: { ...campaign(), name: 'Another campaign' } }));
    for (const path of ['/campaigns', '/templates', '/contacts']) {
      const ids = (res: TestResponse) => (res.body.data as Array<{ id: string }>).map((r) => r.id);
      // untyped: every route (one list query for a list of paths)
      const standard = await pigeon.request('GET', path, { headers: auth });
      expect(ids(standard).length).toBeGreaterThan(0);
      for (const sort of PROTOTYPE_NAMES) {
        // untyped: wrong on purpose (Object.prototype names as sort keys)
        const res = await pigeon.request('GET', `${path}?sort=${sort}&dir=${sort}`, { headers: auth });
        expect(res.status, `${path} sort=${sort}`).toBe(200);
        expect(ids(res)).toEqual(ids(standard));
      }
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Broken multipart bodies to every route that writes

const BOUNDARY = 'pigeon-test-boundary';
const PART = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\nContent-Type: text/csv\r\n\r\nemail\r\na@example.com\r\n`;
const BROKEN_MULTIPART: Record<string, { contentType: string; body: string }> = {
  'no boundary': { contentType: 'multipart/form-data', body: PART },
  'cut off': { contentType: `multipart/form-data; boundary=${BOUNDARY}`, body: PART.slice(0, 60) },
  'no closing boundary': { contentType: `multipart/form-data; boundary=${BOUNDARY}`, body: PART },
  'another boundary': { contentType: 'multipart/form-data; boundary=something-else', body: `${PART}--${BOUNDARY}--` },
  'bad part header': {
    contentType: `multipart/form-data; boundary=${BOUNDARY}`,
    body: `--${BOUNDARY}\r\nthis is not a header\r\n\r\nx\r\n--${BOUNDARY}--\r\n`,
  },
};
/** An empty body is no body: a route whose body is optional rightly acts on it (sends the campaign). */
const EMPTY_MULTIPART = { contentType: `multipart/form-data; boundary=${BOUNDARY}`, body: '' };

describe('broken multipart over every route that writes', () => {
  it('answers 400 on the upload routes and 415 on the JSON routes (no 5xx), and changes no row', async () => {
    // A route without a body schema (`c.noBody()`) reads no body: there is nothing to break.
    const routes = allRoutes().filter(
      ([, route]) => isWrite(route) && typeof (route as { body?: unknown }).body === 'object',
    );
    const before = await fingerprint(pigeon.deps.db.pool);
    const answers: Array<{ probe: string; status: number }> = [];
    const uploads: Array<{ probe: string; status: number }> = [];
    for (const [name, route] of routes) {
      const upload = (route as { contentType?: string }).contentType === 'multipart/form-data';
      const variants = { ...BROKEN_MULTIPART, ...(upload ? { empty: EMPTY_MULTIPART } : {}) };
      for (const [what, { contentType, body }] of Object.entries(variants)) {
        // untyped: raw body (broken multipart, for every upload route)
        const res = await pigeon.request(route.method, realPath(route.path, ids), {
          headers: { ...headersFor(route), 'content-type': contentType },
          rawBody: body,
        });
        const probe = { probe: `${name}: ${what}`, status: res.status };
        answers.push(probe);
        // Uploads cannot read it (400); a JSON route refuses a body it does not read (415; the
        // inbound webhooks, which read any type as JSON, 400).
        expect(res.status, `${name}: ${what}: ${res.text}`).toBe(
          upload || route.path.startsWith('/webhooks/') ? 400 : 415,
        );
        if (upload) uploads.push(probe);
      }
    }
    console.info(`multipart: ${answers.length} requests over ${routes.length} routes (${uploads.length} on uploads)`);
    expect(uploads.length).toBe(2 * (Object.keys(BROKEN_MULTIPART).length + 1));
    expect(answers.filter((a) => a.status >= 500)).toEqual([]);
    expect(changedTables(before, await fingerprint(pigeon.deps.db.pool))).toEqual([]);
  }, 120_000);
});
