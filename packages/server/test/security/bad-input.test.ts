import { contract } from '@pigeon/contract';
import type { AppRoute } from '@ts-rest/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ZodTypeAny } from 'zod';
import { newProject } from '../accounts.js';
import { startTestPigeon, type TestPigeon } from '../helpers.js';

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
    const auth = (route.metadata as { auth?: string } | undefined)?.auth ?? 'secret';
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

function allRoutes(router: object, prefix = ''): Array<[string, AppRoute]> {
  return Object.entries(router).flatMap(([name, value]) =>
    value && typeof value === 'object' && 'method' in value && 'path' in value
      ? [[`${prefix}${name}`, value as AppRoute] as [string, AppRoute]]
      : allRoutes(value as object, `${prefix}${name}.`),
  );
}

/** Field names a zod schema declares, through refinements, unions and optional wrappers. */
function keysOf(schema: unknown): string[] {
  const def = (schema as { _def?: Record<string, unknown> } | undefined)?._def;
  if (!def) return [];
  const shape = (schema as { shape?: Record<string, unknown> }).shape;
  if (shape && typeof shape === 'object') return Object.keys(shape);
  for (const inner of ['schema', 'innerType', 'in', 'type']) {
    if (def[inner] && typeof def[inner] === 'object') return keysOf(def[inner]);
  }
  if (typeof def.getter === 'function') return keysOf((def.getter as () => ZodTypeAny)());
  if (Array.isArray(def.options)) return [...new Set((def.options as unknown[]).flatMap(keysOf))];
  if (def.left) return [...keysOf(def.left), ...keysOf(def.right)];
  return [];
}

const fillPath = (path: string, value: (param: string) => string) =>
  path.replace(/:([A-Za-z]+)/g, (_m, param: string) => value(param));

const ROWS_TO_WATCH = [
  'users',
  'projects',
  'memberships',
  'invitations',
  'auth_tokens',
  'login_failures',
  'contacts',
  'events',
  'background_jobs',
  'idempotency_keys',
  'domains',
  'templates',
  'emails',
  'segments',
  'segment_members',
  'resource_refs',
  'contact_changes',
  'campaigns',
  'workflows',
  'workflow_steps',
  'workflow_transitions',
  'workflow_executions',
];

/** An order-independent digest of every watched table's rows. */
async function fingerprint(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const table of ROWS_TO_WATCH) {
    const { rows } = await pigeon.deps.db.pool.query(
      `SELECT count(*)::int AS n, md5(coalesce(string_agg(md5(t::text), ',' ORDER BY md5(t::text)), '')) AS digest FROM ${table} t`,
    );
    out[table] = `${rows[0].n}:${rows[0].digest}`;
  }
  return out;
}

interface Probe {
  route: string;
  what: string;
  status: number;
}

async function probe(name: string, route: AppRoute, what: string, path: string, rawBody?: string): Promise<Probe> {
  const res = await pigeon.request(route.method, path, {
    headers: { ...headersFor(route), ...(rawBody === undefined ? {} : { 'content-type': 'application/json' }) },
    rawBody,
  });
  return { route: `${route.method} ${route.path} (${name})`, what, status: res.status };
}

describe('bad-input table over every contract route', () => {
  it('answers no 5xx and changes no row', async () => {
    const routes = allRoutes(contract);
    expect(routes.length).toBeGreaterThan(100);
    const results: Probe[] = [];
    const changed: string[] = [];
    for (const [name, route] of routes) {
      const before = await fingerprint();
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
      const after = await fingerprint();
      const tables = ROWS_TO_WATCH.filter((t) => after[t] !== before[t]);
      if (tables.length) changed.push(`${route.method} ${route.path}: ${tables.join(', ')}`);
    }
    const failures = results.filter((r) => r.status >= 500);
    expect(failures).toEqual([]);
    expect(results.length).toBeGreaterThan(800);
    expect(changed).toEqual([]);
  }, 240_000);
});
