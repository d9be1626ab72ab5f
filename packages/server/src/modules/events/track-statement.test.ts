import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject } from '../../../test/accounts.js';
import { insertManyContacts } from '../../../test/fixtures/contacts.js';
import { startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { hashKey } from '../projects/keys.js';
import { toTrackRow } from './track.js';
import { runTrackStatement } from './track-statement.js';

let pigeon: TestPigeon;
beforeAll(async () => {
  pigeon = await startTestPigeon();
});
afterAll(() => pigeon?.stop());

describe('the track statement plan', () => {
  it('probes the contacts of a group by index, even with a plan made while the project had none', async () => {
    const { project } = await newProject(pigeon);
    const client = await pigeon.deps.db.pool.connect();
    try {
      const plans: string[] = [];
      client.on('notice', (notice) => plans.push(String(notice.message)));
      await client.query(`LOAD 'auto_explain'`);
      await client.query('SET auto_explain.log_min_duration = 0');
      await client.query('SET client_min_messages = log');
      // The cached plan of a pooled connection: made once, kept while the table grows.
      await client.query('SET plan_cache_mode = force_generic_plan');
      const owner = { by: 'public' as const, keyHash: hashKey(project.publicKey) };
      const options = { rateLimitPerMinute: 0, idempotencyTtlMinutes: 60 };
      const group = (tag: string) =>
        Array.from({ length: 20 }, (_, i) => toTrackRow({ email: `${tag}-${i}@plan.example`, event: 'e' }));
      await runTrackStatement(client, owner, group('first'), options);
      await insertManyContacts(pigeon.deps.db.pool, project.id, 20000, { prefix: 'grown-', domain: 'plan.example' });
      plans.length = 0;
      const outcomes = await runTrackStatement(client, owner, [...group('second'), ...group('first')], options);
      expect(outcomes.every((o) => o.tracked)).toBe(true);
      const plan = plans.find((p) => p.includes('CTE existing')) ?? '';
      const existing = plan.slice(plan.indexOf('CTE existing'), plan.indexOf('CTE upserted'));
      expect(existing).toContain('Index Scan using contacts_project_email on contacts');
      expect(existing).not.toMatch(/Seq Scan|Bitmap|Merge/);
    } finally {
      client.release();
    }
  });
});
