import type { AppRoute } from '@ts-rest/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject } from '../accounts.js';
import { startTestPigeon, type TestPigeon } from '../helpers.js';
import { allRoutes, authOf, changedTables, fillPath, fingerprint, keysOf } from './contract-routes.js';

/**
 * The bad-input table: every route of the contract gets NUL characters, lone surrogates, deep
 * nesting, huge strings and keys, and wrong types in every body field, every query parameter and
 * every path parameter. Nothing may answer 5xx, and no row of Pigeon's tables may change.
 */

let pigeon: TestPigeon;
let headersFor: (route: AppRoute) => Record<string, string>;

beforeAll(async () => {
  // API role only: no worker changes rows behind the table's back; no rate limit to hide answers.
  pigeon = await startTestPigeon({ role: 'api', env: { RATE_LIMIT_PER_MINUTE: '0' } });
  const { owner, project } = await newProject(pigeon);
  headersFor = (route): Record<string, string> => {
    const auth = authOf(route);
    if (auth === 'none') return {};
    if (auth === 'session') return { cookie: owner.cookie };
    if (auth === 'track') return { authorization: `Bearer ${project.publicKey}` };
    return { authorization: `Bearer ${project.secretKey}` };
  };
});
afterAll(() => pigeon?.stop());

/**
 * JSON text of each bad value (text, because JSON.stringify cannot write what the deep one is).
 * Each is put in every field at once, so no request of the table can be valid.
 */
const BAD_VALUES: Record<string, string> = {
  nul: '"a\\u0000b"',
  loneHighSurrogate: '"\\ud800 then text"',
  loneLowSurrogate: '"text then \\udc00"',
  nulKey: '{"k\\u0000":"v"}',
  surrogateKey: '{"\\udfff":"v"}',
  deep: `${'['.repeat(5_000)}${']'.repeat(5_000)}`,
  hugeString: JSON.stringify('x'.repeat(200_000)),
  hugeKey: JSON.stringify({ ['k'.repeat(100_000)]: 1 }),
  manyKeys: JSON.stringify(Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`key${i}`, i]))),
  number: '12345',
  array: '[1,"two",null]',
  object: '{"unexpected":true}',
  null: 'null',
};

const BAD_QUERY_VALUES: Record<string, string> = {
  nul: 'a%00b',
  loneSurrogateUtf8: '%ED%A0%80',
  malformedPercent: '%E0%A4%A',
  huge: 'x'.repeat(6_000),
};

const BAD_PATH_VALUES: Record<string, string> = {
  nul: 'a%00b',
  nulOnly: '%00',
  malformedPercent: '%E0%A4%A',
  loneSurrogateUtf8: '%ED%A0%80',
};

interface Probe {
  route: string;
  what: string;
  status: number;
  /** The answer's body is the spec's error envelope (or, where spec §7 says so, its bare 400). */
  envelope: boolean;
}

/** Spec §7: template, segment and contact create answer a 400 with a bare `{ error: <message> }`. */
const BARE_400 = new Set(['POST /templates', 'POST /segments', 'POST /contacts']);

function isErrorEnvelope(route: AppRoute, status: number, body: unknown): boolean {
  const b = body as { success?: unknown; error?: { code?: unknown; statusCode?: unknown } | string } | undefined;
  if (status === 400 && BARE_400.has(`${route.method} ${route.path}`)) return typeof b?.error === 'string';
  return (
    b?.success === false &&
    typeof b.error === 'object' &&
    typeof b.error.code === 'string' &&
    b.error.statusCode === status
  );
}

async function probe(name: string, route: AppRoute, what: string, path: string, rawBody?: string): Promise<Probe> {
  // untyped: every route (bad input sent raw to each route of the contract)
  const res = await pigeon.request(route.method, path, {
    headers: { ...headersFor(route), ...(rawBody === undefined ? {} : { 'content-type': 'application/json' }) },
    rawBody,
  });
  return {
    route: `${route.method} ${route.path} (${name})`,
    what,
    status: res.status,
    envelope: res.status < 400 || isErrorEnvelope(route, res.status, res.body),
  };
}

describe('bad-input table over every contract route', () => {
  it('answers no 5xx, every refusal in the error envelope, and changes no row', async () => {
    const routes = allRoutes();
    expect(routes.length).toBeGreaterThan(100);
    const results: Probe[] = [];
    const changed: string[] = [];
    for (const [name, route] of routes) {
      const before = await fingerprint(pigeon.deps.db.pool);
      const uuidPath = fillPath(route.path, () => crypto.randomUUID());
      if (route.path.includes(':')) {
        for (const [what, bad] of Object.entries(BAD_PATH_VALUES)) {
          results.push(
            await probe(
              name,
              route,
              `path ${what}`,
              fillPath(route.path, () => bad),
            ),
          );
        }
      }
      for (const key of keysOf((route as { query?: unknown }).query)) {
        for (const [what, bad] of Object.entries(BAD_QUERY_VALUES)) {
          results.push(await probe(name, route, `query ${key} ${what}`, `${uuidPath}?${key}=${bad}`));
        }
      }
      // A route without a body schema (`c.noBody()`) ignores what is sent: nothing to refuse there.
      if (route.method !== 'GET' && typeof (route as { body?: unknown }).body === 'object') {
        const fields = keysOf((route as { body?: unknown }).body);
        for (const [what, bad] of Object.entries(BAD_VALUES)) {
          const body = fields.length ? `{${fields.map((f) => `${JSON.stringify(f)}:${bad}`).join(',')}}` : bad;
          results.push(await probe(name, route, `body ${what}`, uuidPath, body));
        }
      }
      const after = await fingerprint(pigeon.deps.db.pool);
      const tables = changedTables(before, after);
      if (tables.length) changed.push(`${route.method} ${route.path}: ${tables.join(', ')}`);
    }
    const failures = results.filter((r) => r.status >= 500);
    expect(failures).toEqual([]);
    expect(results.filter((r) => !r.envelope)).toEqual([]);
    expect(results.length).toBeGreaterThan(800);
    expect(changed).toEqual([]);
  }, 240_000);
});
