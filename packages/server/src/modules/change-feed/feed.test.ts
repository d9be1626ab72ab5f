import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject } from '../../../test/accounts.js';
import { startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { type ContactChange, type FeedConsumer, processPart } from './feed.js';

let pigeon: TestPigeon;
beforeAll(async () => {
  pigeon = await startTestPigeon();
});
afterAll(() => pigeon?.stop());

describe('change feed order', () => {
  it('reads (txid, seq) in numeric order, each change once, across batch boundaries', async () => {
    const { project } = await newProject(pigeon);
    const db = pigeon.deps.db.pool;
    // Old, finished transaction ids (below every snapshot's xmin), whose text order differs from
    // their numeric order: 9 < 10 < 100, and seq 9 < 10 within one transaction.
    const rows: Array<[number, number]> = [
      [9, 101],
      [10, 9],
      [10, 10],
      [100, 1],
    ];
    const part = 5;
    for (const [txid, seq] of rows) {
      await db.query(
        `INSERT INTO contact_changes (part, txid, seq, project_id, contact_id, kind)
         OVERRIDING SYSTEM VALUE VALUES ($1, $2::text::xid8, $3, $4, gen_random_uuid(), 'created')`,
        [part, txid, seq, project.id],
      );
    }
    const seen: string[] = [];
    const consumer: FeedConsumer = {
      name: 'test.order',
      async handle(_client, changes: ContactChange[]) {
        seen.push(...changes.map((c) => `${c.txid}/${c.seq}`));
      },
    };
    await db.query(`INSERT INTO change_feed_cursors (consumer, part, txid, seq) VALUES ($1, $2, '1'::xid8, 0)`, [
      consumer.name,
      part,
    ]);
    for (let i = 0; i < 10; i++) await processPart(pigeon.deps, consumer, part, 2);
    expect(seen).toEqual(['9/101', '10/9', '10/10', '100/1']);
  });
});
