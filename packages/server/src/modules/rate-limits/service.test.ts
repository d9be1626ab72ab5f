import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject } from '../../../test/accounts.js';
import { api } from '../../../test/api.js';
import { expectEnvelope, startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { queryRows, sql } from '../../db/query.js';

let pigeon: TestPigeon;
beforeAll(async () => {
  pigeon = await startTestPigeon({ env: { RATE_LIMIT_PER_MINUTE: '5' } });
});
afterAll(() => pigeon?.stop());

const list = (p: TestPigeon, auth: Record<string, string>) => api(p, auth).contacts.list();

describe('per-project rate limit', () => {
  it('counts requests with headers and refuses the one over the limit with 429 and Retry-After', async () => {
    const { auth, project } = await newProject(pigeon);
    const minute = Math.floor(Date.now() / 60_000);
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await list(pigeon, auth));
    if (Math.floor(Date.now() / 60_000) !== minute) return; // crossed a window edge: the counts restart, nothing to assert
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(answers.map((r) => r.headers.get('ratelimit-remaining'))).toEqual(['4', '3', '2', '1', '0']);
    expect(answers[0]?.headers.get('ratelimit-limit')).toBe('5');
    const reset = Number(answers[0]?.headers.get('ratelimit-reset'));
    expect(reset).toBeGreaterThan(0);
    expect(reset).toBeLessThanOrEqual(60);
    const refused = await api(pigeon, { authorization: `Bearer ${project.publicKey}` }).events.track({
      body: { email: 'x@example.com', event: 'x' },
    });
    const error = expectEnvelope(refused, 429, 'RATE_LIMIT_EXCEEDED');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(error.details).toMatchObject({ limit: 5 });
    const stored = await queryRows(pigeon.deps.db.pool, sql`SELECT 1 FROM contacts WHERE project_id = ${project.id}`);
    expect(stored).toHaveLength(0); // the refused track stored nothing
  });

  it('counts dashboard sessions separately from API keys: exhausting one leaves the other', async () => {
    const { owner, auth, project } = await newProject(pigeon);
    const asSession = { cookie: owner.cookie, 'x-project-id': project.id };
    const minute = Math.floor(Date.now() / 60_000);
    for (let i = 0; i < 5; i++) await list(pigeon, auth);
    const keyRefused = await list(pigeon, auth);
    const sessionAnswers = [];
    for (let i = 0; i < 5; i++) sessionAnswers.push(await list(pigeon, asSession));
    const sessionRefused = await list(pigeon, asSession);
    if (Math.floor(Date.now() / 60_000) !== minute) return; // crossed a window edge: nothing to assert
    expectEnvelope(keyRefused, 429, 'RATE_LIMIT_EXCEEDED');
    expect(sessionAnswers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(sessionAnswers.map((r) => r.headers.get('ratelimit-remaining'))).toEqual(['4', '3', '2', '1', '0']);
    expectEnvelope(sessionRefused, 429, 'RATE_LIMIT_EXCEEDED');
  });

  it("never lets one project's traffic limit another", async () => {
    const busy = await newProject(pigeon);
    const quiet = await newProject(pigeon);
    for (let i = 0; i < 7; i++) await list(pigeon, busy.auth);
    const res = await list(pigeon, quiet.auth);
    expect(res.status).toBe(200);
  });

  it('shares one budget between two server processes on one database', async () => {
    const { auth } = await newProject(pigeon);
    const other = await startTestPigeon({
      databaseUrl: pigeon.deps.db.url,
      role: 'api',
      env: { RATE_LIMIT_PER_MINUTE: '5' },
    });
    try {
      const minute = Math.floor(Date.now() / 60_000);
      const statuses = [];
      for (let i = 0; i < 6; i++) statuses.push((await list(i % 2 ? other : pigeon, auth)).status);
      if (Math.floor(Date.now() / 60_000) !== minute) return;
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    } finally {
      await other.stop();
    }
  });

  it('stays exact with two API processes and concurrent tracks: exactly the limit goes through', async () => {
    const limit = 20;
    const env = { RATE_LIMIT_PER_MINUTE: String(limit) };
    const apis = [
      await startTestPigeon({ databaseUrl: pigeon.deps.db.url, role: 'api', env }),
      await startTestPigeon({ databaseUrl: pigeon.deps.db.url, role: 'api', env }),
    ];
    try {
      const { project } = await newProject(apis[0] as TestPigeon);
      const headers = { authorization: `Bearer ${project.publicKey}` };
      // Four clients per process, each sending its tracks one after another: never more than 8 in flight.
      const perClient = 12;
      const minute = Math.floor(Date.now() / 60_000);
      const statuses = (
        await Promise.all(
          apis.flatMap((node, a) =>
            [0, 1, 2, 3].map(async (c) => {
              const seen: number[] = [];
              for (let i = 0; i < perClient; i++) {
                const body = { email: `p${a}-c${c}-${i}@example.com`, event: 'burst' };
                seen.push((await api(node, headers).events.track({ body })).status);
              }
              return seen;
            }),
          ),
        )
      ).flat();
      const after = await Promise.all(
        apis.map((node) => api(node, headers).events.track({ body: { email: 'late@example.com', event: 'late' } })),
      );
      if (Math.floor(Date.now() / 60_000) !== minute) return; // crossed a window edge: the counts restart
      const accepted = statuses.filter((s) => s === 200).length;
      expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
      // Each process alone would have let `limit` through; together they share one budget, exactly.
      expect(accepted).toBe(limit);
      expect(after.map((r) => r.status)).toEqual([429, 429]);
      const [events] = await queryRows<{ n: number }>(
        pigeon.deps.db.pool,
        sql`SELECT count(*)::int AS n FROM events WHERE project_id = ${project.id}`,
      );
      expect(events?.n).toBe(accepted); // a refused track recorded nothing
      const [counted] = await queryRows<{ n: number }>(
        pigeon.deps.db.pool,
        sql`SELECT sum(hits)::int AS n FROM rate_limit_counters WHERE project_id = ${project.id} AND caller = 0`,
      );
      expect(counted?.n).toBe(statuses.length + after.length); // every request counted, refused ones too
    } finally {
      await Promise.all(apis.map((api) => api.stop()));
    }
  });

  it('is off when RATE_LIMIT_PER_MINUTE is 0', async () => {
    const unlimited = await startTestPigeon({
      databaseUrl: pigeon.deps.db.url,
      role: 'api',
      env: { RATE_LIMIT_PER_MINUTE: '0' },
    });
    try {
      const { auth } = await newProject(unlimited);
      for (let i = 0; i < 8; i++) expect((await list(unlimited, auth)).status).toBe(200);
      expect((await list(unlimited, auth)).headers.get('ratelimit-limit')).toBeNull();
    } finally {
      await unlimited.stop();
    }
  });
});
