import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject } from '../../../test/accounts.js';
import { insertContact } from '../../../test/fixtures/contacts.js';
import { createTestDatabase, startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { until } from '../../../test/until.js';
import { queryRows, runStatement, sql } from '../../db/query.js';
import {
  type ContactChange,
  type FeedConsumer,
  feedLag,
  PARTS,
  processPart,
  processParts,
  registerConsumer,
  roundOrder,
} from './feed.js';

let pigeon: TestPigeon;
beforeAll(async () => {
  pigeon = await startTestPigeon();
});
afterAll(() => pigeon?.stop());

describe('change feed rounds', () => {
  it('visit every part exactly once per round, starting at a random one', () => {
    const draws = [0.93, 0.05, 0.51, 0.27, 0.78, 0.64, 0.12, 0.39];
    for (const [i, draw] of draws.entries()) {
      // Whatever the random source answers next, a round is a rotation of all parts.
      let n = i;
      const order = roundOrder(() => draws[n++ % draws.length] ?? 0);
      expect([...order].sort((a, b) => a - b)).toEqual(Array.from({ length: PARTS }, (_, p) => p));
      expect(order[0]).toBe(Math.floor(draw * PARTS));
    }
  });
});

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
      await runStatement(
        db,
        sql`INSERT INTO contact_changes (part, txid, seq, project_id, contact_id, kind)
         OVERRIDING SYSTEM VALUE VALUES (${part}, ${txid}::text::xid8, ${seq}, ${project.id}, gen_random_uuid(), 'created')`,
      );
    }
    const seen: string[] = [];
    const consumer: FeedConsumer = {
      name: 'test.order',
      async handle(_client, changes: ContactChange[]) {
        seen.push(...changes.map((c) => `${c.txid}/${c.seq}`));
      },
    };
    await runStatement(
      db,
      sql`INSERT INTO change_feed_cursors (consumer, part, txid, seq) VALUES (${consumer.name}, ${part}, '1'::xid8, 0)`,
    );
    for (let i = 0; i < 10; i++) await processPart(pigeon.deps, consumer, part, 2);
    expect(seen).toEqual(['9/101', '10/9', '10/10', '100/1']);
  });

  it('passes over the changes a consumer does not want, in the database, and moves its cursor past them', async () => {
    const { project } = await newProject(pigeon);
    const db = pigeon.deps.db.pool;
    const part = 3;
    // Four changes of one contact in one part: created, event a, event b, updated.
    const kinds: Array<[string, string | null]> = [
      ['created', null],
      ['event', 'a'],
      ['event', 'b'],
      ['updated', null],
    ];
    for (const [i, [kind, name]] of kinds.entries()) {
      await runStatement(
        db,
        sql`INSERT INTO contact_changes (part, txid, seq, project_id, contact_id, kind, event_id, name)
         OVERRIDING SYSTEM VALUE VALUES (${part}, '50'::xid8, ${i + 1}, ${project.id}, '00000000-0000-4000-8000-000000000001',
                                         ${kind}, CASE WHEN ${kind} = 'event' THEN gen_random_uuid() END, ${name})`,
      );
    }
    const seen: string[] = [];
    const consumer: FeedConsumer = {
      name: `test.wants.${Date.now()}`,
      wants: sql`ch.kind = 'event' AND ch.name = 'b'`,
      async handle(_client, changes) {
        seen.push(...changes.map((c) => `${c.kind}:${c.name}:${c.seq}`));
      },
    };
    await runStatement(
      db,
      sql`INSERT INTO change_feed_cursors (consumer, part, txid, seq) VALUES (${consumer.name}, ${part}, '1'::xid8, 0)`,
    );
    // Batches of 2: the first holds nothing wanted, yet the cursor moves past it; the second holds b.
    const first = await processParts(pigeon.deps, consumer, [part], 2);
    expect(first).toEqual({ handled: 0, backlog: true });
    const cursor = async () =>
      (
        await queryRows<{ seq: string }>(
          db,
          sql`SELECT seq::text FROM change_feed_cursors WHERE consumer = ${consumer.name} AND part = ${part}`,
        )
      )[0]?.seq;
    expect(await cursor()).toBe('2');
    expect(await processParts(pigeon.deps, consumer, [part], 2)).toEqual({ handled: 1, backlog: true });
    expect(await cursor()).toBe('4');
    expect(await processParts(pigeon.deps, consumer, [part], 2)).toEqual({ handled: 0, backlog: false });
    expect(seen).toEqual(['event:b:3']);
  });

  it('reads several parts in one transaction and skips the parts another transaction holds', async () => {
    const { project } = await newProject(pigeon);
    const db = pigeon.deps.db.pool;
    const consumer: FeedConsumer = {
      name: `test.parts.${Date.now()}`,
      async handle(_client, changes) {
        seen.push(...changes.map((c) => c.contactId));
      },
    };
    const seen: string[] = [];
    const parts = Array.from({ length: PARTS }, (_, p) => p);
    for (const p of parts) {
      await runStatement(
        db,
        sql`INSERT INTO contact_changes (part, txid, seq, project_id, contact_id, kind)
         OVERRIDING SYSTEM VALUE VALUES (${p}, '200'::xid8, 1, ${project.id}, ${`00000000-0000-4000-8000-00000000000${p}`}, 'created')`,
      );
      await runStatement(
        db,
        sql`INSERT INTO change_feed_cursors (consumer, part, txid, seq) VALUES (${consumer.name}, ${p}, '199'::xid8, 0)`,
      );
    }
    // (txids above the other tests' rows.) Another worker holds part 6 for the length of its transaction.
    const other = await db.connect();
    try {
      await other.query('BEGIN');
      await runStatement(other, sql`SELECT pg_advisory_xact_lock(hashtext(${`change-feed:${consumer.name}`}), 6)`);
      expect(await processParts(pigeon.deps, consumer, parts, 10)).toEqual({ handled: PARTS - 1, backlog: false });
      await other.query('COMMIT');
    } finally {
      other.release();
    }
    expect(await processParts(pigeon.deps, consumer, parts, 10)).toEqual({ handled: 1, backlog: false });
    expect(seen.toSorted()).toEqual(parts.map((p) => `00000000-0000-4000-8000-00000000000${p}`));
  });
});

describe('the snapshot xmin the feed reads below', () => {
  it('is the whole cluster’s: a transaction open in another database holds the feed back, and the lag gauge shows it', async () => {
    const { project } = await newProject(pigeon);
    const db = pigeon.deps.db.pool;
    const seen: string[] = [];
    const consumer: FeedConsumer = {
      name: `test.xmin.${Date.now()}`,
      async handle(_client, changes) {
        seen.push(...changes.map((c) => c.contactId));
      },
    };
    await registerConsumer(db, consumer.name);
    const lag = async () => (await feedLag(db)).find((l) => l.consumer === consumer.name)?.lagSeconds ?? -1;
    const drain = async () => {
      for (const part of Array.from({ length: PARTS }, (_, p) => p))
        await processPart(pigeon.deps, consumer, part, 100);
    };
    // Another application's transaction on the same PostgreSQL server, in another database, with a
    // transaction id (it wrote, or asked for one).
    const other = new pg.Client({ connectionString: await createTestDatabase() });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT pg_current_xact_id()');
      const contact = { id: await insertContact(db, { projectId: project.id, email: 'held@x.example' }) };
      await new Promise((r) => setTimeout(r, 1100));
      await drain();
      expect(seen).toEqual([]); // committed, but younger than the other database's open transaction
      expect(await lag()).toBeGreaterThanOrEqual(1);
      await other.query('COMMIT');
      // Once it ended, the next read takes the change (eventually: other test files' transactions on
      // this shared server hold the feed back the same way while they are open).
      await until(
        async () => {
          await drain();
          return seen;
        },
        (s) => s.length > 0,
        60_000,
      );
      expect(seen).toEqual([contact?.id]);
      expect(await lag()).toBe(0);
    } finally {
      await other.end();
    }
  }, 90_000);
});
