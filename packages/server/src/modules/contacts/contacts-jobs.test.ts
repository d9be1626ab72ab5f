import { afterAll, assert, beforeAll, describe, expect, it } from 'vitest';
import { eventNames, newProject, waitForJob } from '../../../test/accounts.js';
import { api, bodyOf } from '../../../test/api.js';
import { setJobRunning } from '../../../test/fixtures/background-jobs.js';
import { expectEnvelope, startTestPigeon, type TestPigeon } from '../../../test/helpers.js';
import { queryRows, sql } from '../../db/query.js';
import { insertJob, type JobRow } from '../background-jobs/service.js';
import { contactJobHandlers } from './jobs.js';
import { createMissingContacts } from './rows.js';

let pigeon: TestPigeon;
beforeAll(async () => {
  pigeon = await startTestPigeon();
});
afterAll(() => pigeon?.stop());

async function upload(auth: Record<string, string>, csv: string | Buffer, field = 'file') {
  const form = new FormData();
  form.append(
    field,
    new Blob([typeof csv === 'string' ? csv : new Uint8Array(csv)], { type: 'text/csv' }),
    'contacts.csv',
  );
  const res = await fetch(`${pigeon.url}/contacts/import`, { method: 'POST', headers: auth, body: form });
  return { status: res.status, body: await res.json() };
}

const byEmail = async (auth: Record<string, string>, email: string) =>
  bodyOf(await api(pigeon, auth).contacts.list({ query: { search: email } }), 200).data[0];

describe('CSV import', () => {
  it('imports good rows, reports bad ones by line, recognises numbers and booleans', async () => {
    const { auth } = await newProject(pigeon);
    await api(pigeon, auth).contacts.create({
      body: { email: 'old@example.com', subscribed: true, data: { plan: 'free', keep: 'me' } },
    });
    const csv = [
      'Email,plan,seats,trial,subscribed,id',
      'new@example.com,pro,3,true,,x',
      'not-an-email,pro,1,false,,',
      'OLD@example.com,team,,false,no,',
      ',missing,1,true,,',
      'flag@example.com,pro,2,false,maybe,',
      '"quoted@example.com","a, b",007,TRUE,yes,',
    ].join('\n');
    const accepted = await upload(auth, csv);
    expect(accepted.status).toBe(202);
    const job = await waitForJob(pigeon, `/contacts/import/${accepted.body.jobId}`, auth);
    expect(job).toMatchObject({
      kind: 'import',
      status: 'completed',
      progress: 100,
      total: 6,
      processed: 6,
      created: 2,
      updated: 1,
      skipped: 3,
    });
    expect(job.errors.map((e: { row: number }) => e.row).sort()).toEqual([3, 5, 6]);
    expect(job.errors.find((e: { row: number }) => e.row === 3).reason).toContain('invalid email');
    expect(await byEmail(auth, 'new@example.com')).toMatchObject({
      subscribed: true,
      data: { plan: 'pro', seats: 3, trial: true },
    });
    expect(await byEmail(auth, 'quoted@example.com')).toMatchObject({
      data: { plan: 'a, b', seats: '007', trial: true },
    });
    const old = await byEmail(auth, 'old@example.com');
    expect(old).toMatchObject({ subscribed: false, data: { plan: 'team', trial: false, keep: 'me' } });
    assert(old);
    expect(await eventNames(pigeon, old.id)).toEqual(['contact.unsubscribed']);
  });

  it('fails an import without an email column with a clear reason', async () => {
    const { auth } = await newProject(pigeon);
    const accepted = await upload(auth, 'name,plan\nAda,pro\n');
    const job = await waitForJob(pigeon, `/contacts/import/${accepted.body.jobId}`, auth);
    expect(job).toMatchObject({ status: 'failed', error: 'The CSV header has no "email" column' });
  });

  it('reports a row with a NUL byte by its line and imports the other 100 at once', async () => {
    const { auth } = await newProject(pigeon);
    const lines = ['email,name', ...Array.from({ length: 101 }, (_, i) => `row${i}@example.com,Name ${i}`)];
    lines[51] = 'nul@example.com,Bad\u0000Name';
    const accepted = await upload(auth, lines.join('\n'));
    const job = await waitForJob(pigeon, `/contacts/import/${accepted.body.jobId}`, auth, 5_000);
    expect(job).toMatchObject({ status: 'completed', total: 101, created: 100, skipped: 1 });
    expect(job.errors).toEqual([{ row: 52, reason: expect.stringContaining('NUL') }]);
    expect(await byEmail(auth, 'nul@example.com')).toBeUndefined();
  });

  it('fails a file with a quote never closed at once, saying where, and imports nothing', async () => {
    const { project, auth } = await newProject(pigeon);
    const csv = 'email,name\na@example.com,Ada\nb@example.com,"Bob\nc@example.com,Cy\n';
    const accepted = await upload(auth, csv);
    const job = await waitForJob(pigeon, `/contacts/import/${accepted.body.jobId}`, auth, 5_000);
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/quoted cell is never closed.*line 3/);
    const rows = await queryRows(
      pigeon.deps.db.pool,
      sql`SELECT count(*)::int AS n FROM contacts WHERE project_id = ${project.id}`,
    );
    expect(rows[0]?.n).toBe(0);
  });

  it('counts lines as the file has them: a quoted cell over two lines and blank lines', async () => {
    const { auth } = await newProject(pigeon);
    const csv = 'email,note\na@example.com,"two\nlines"\n\nnot-an-email,x\n';
    const job = await waitForJob(pigeon, `/contacts/import/${(await upload(auth, csv)).body.jobId}`, auth);
    expect(job.errors).toEqual([{ row: 5, reason: expect.stringContaining('invalid email') }]);
    expect((await byEmail(auth, 'a@example.com'))?.data.note).toBe('two\nlines');
  });

  it('reads Windows-1252 / Latin-1 exports and UTF-16 with a BOM without corrupting them', async () => {
    const { auth } = await newProject(pigeon);
    const latin = Buffer.from([
      ...Buffer.from('email,name,price\nzoe@example.com,Zo'),
      0xeb, // ë
      ...Buffer.from(' M'),
      0xfc, // ü
      ...Buffer.from('ller,'),
      0x80, // € in Windows-1252
      ...Buffer.from('5\n'),
    ]);
    const job = await waitForJob(pigeon, `/contacts/import/${(await upload(auth, latin)).body.jobId}`, auth);
    expect(job).toMatchObject({ status: 'completed', created: 1 });
    expect(job.errors).toEqual([{ reason: expect.stringContaining('Windows-1252') }]);
    expect((await byEmail(auth, 'zoe@example.com'))?.data).toEqual({ name: 'Zoë Müller', price: '€5' });

    const utf16 = Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from('email,name\nyu@example.com,Yū 🙂\n', 'utf16le'),
    ]);
    await waitForJob(pigeon, `/contacts/import/${(await upload(auth, utf16)).body.jobId}`, auth);
    expect((await byEmail(auth, 'yu@example.com'))?.data).toEqual({ name: 'Yū 🙂' });

    const utf8 = await upload(auth, '\ufeffemail,name\nana@example.com,Ana Müller\n');
    const utf8Job = await waitForJob(pigeon, `/contacts/import/${utf8.body.jobId}`, auth);
    expect(utf8Job.errors).toEqual([]);
    expect((await byEmail(auth, 'ana@example.com'))?.data).toEqual({ name: 'Ana Müller' });
  });

  it('refuses a file that is neither UTF-8 nor Windows-1252 rather than guessing', async () => {
    const { auth } = await newProject(pigeon);
    const file = Buffer.from([...Buffer.from('email,name\nx@example.com,A'), 0x81, 0xc3, ...Buffer.from('\n')]);
    const job = await waitForJob(pigeon, `/contacts/import/${(await upload(auth, file)).body.jobId}`, auth, 5_000);
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/neither UTF-8 nor Windows-1252.*0x81/);
  });

  it('refuses a file over 5 MB with 413 and a missing file with 422', async () => {
    const { auth } = await newProject(pigeon);
    const big = Buffer.alloc(5 * 1024 * 1024 + 10, 'a');
    const tooBig = await upload(auth, big);
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    const missing = await upload(auth, 'email\na@example.com\n', 'other');
    expect(missing.status).toBe(422);
  });

  it("keeps another project's job behind 404", async () => {
    const mine = await newProject(pigeon);
    const theirs = await newProject(pigeon);
    const accepted = await upload(theirs.auth, 'email\nx@example.com\n');
    expectEnvelope(
      await api(pigeon, mine.auth).contacts.importStatus({ params: { jobId: accepted.body.jobId } }),
      404,
      'NOT_FOUND',
    );
    expectEnvelope(
      await api(pigeon, theirs.auth).contacts.bulkStatus({ params: { jobId: accepted.body.jobId } }),
      404,
      'NOT_FOUND',
    );
  });

  it('resumes an interrupted import where its last committed batch ended, without doubling counts', async () => {
    const { project } = await newProject(pigeon);
    const rows = Array.from({ length: 4500 }, (_, i) => `r${i}@example.com,${i}`);
    const file = Buffer.from(`email,n\n${rows.join('\n')}\n`);
    const jobId = await insertJob(pigeon.deps.db.pool, project.id, 'import', {}, file);
    // A worker that crashed after the first batch of 2000 had committed this much:
    await setJobRunning(pigeon.deps.db.pool, jobId, { total: 4500, processed: 2000, created: 2000 });
    const crashedEmails = rows.slice(0, 2000).map((r) => r.split(',')[0] as string);
    await createMissingContacts(pigeon.deps.db.pool, project.id, crashedEmails, true);
    const jobs = await queryRows<JobRow>(pigeon.deps.db.pool, sql`SELECT * FROM background_jobs WHERE id = ${jobId}`);
    await contactJobHandlers.import({
      pool: pigeon.deps.db.pool,
      job: jobs[0] as JobRow,
      logger: pigeon.deps.logger,
      heartbeat: async () => {},
    });
    const after = await queryRows(
      pigeon.deps.db.pool,
      sql`SELECT processed, created, updated FROM background_jobs WHERE id = ${jobId}`,
    );
    expect(after[0]).toEqual({ processed: 4500, created: 4500, updated: 0 });
    const count = await queryRows(
      pigeon.deps.db.pool,
      sql`SELECT count(*)::int AS n FROM contacts WHERE project_id = ${project.id}`,
    );
    expect(count[0]?.n).toBe(4500);
  });
});

describe('bulk jobs', () => {
  async function seed(auth: Record<string, string>, n: number, subscribed = true) {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      ids.push(
        bodyOf(
          await api(pigeon, auth).contacts.create({ body: { email: `b${i}-${Date.now()}@example.com`, subscribed } }),
          201,
        ).id,
      );
    }
    return ids;
  }

  it('unsubscribes and subscribes, recording events only for contacts that changed', async () => {
    const { auth } = await newProject(pigeon);
    const ids = await seed(auth, 3);
    await api(pigeon, auth).contacts.update({ params: { id: ids[0] as string }, body: { subscribed: false } });
    const unknown = '01a20000-0000-7000-8000-000000000000';
    const accepted = await api(pigeon, auth).contacts.bulkUnsubscribe({ body: { contactIds: [...ids, unknown] } });
    expect(accepted.status).toBe(202);
    const job = await waitForJob(pigeon, `/contacts/bulk/${bodyOf(accepted, 202).jobId}`, auth);
    expect(job).toMatchObject({
      kind: 'bulk_unsubscribe',
      status: 'completed',
      total: 4,
      processed: 4,
      updated: 2,
      skipped: 2,
    });
    expect(job.errors).toEqual([{ contactId: unknown, reason: 'contact not found' }]);
    expect(await eventNames(pigeon, ids[0] as string)).toEqual(['contact.unsubscribed']);
    expect(await eventNames(pigeon, ids[1] as string)).toEqual(['contact.unsubscribed']);
    const back = await api(pigeon, auth).contacts.bulkSubscribe({ body: { contactIds: [ids[1] as string] } });
    await waitForJob(pigeon, `/contacts/bulk/${bodyOf(back, 202).jobId}`, auth);
    expect(await eventNames(pigeon, ids[1] as string)).toEqual(['contact.unsubscribed', 'contact.subscribed']);
  });

  it('deletes contacts of the project only', async () => {
    const mine = await newProject(pigeon);
    const theirs = await newProject(pigeon);
    const [own] = (await seed(mine.auth, 1)) as [string];
    const [foreign] = (await seed(theirs.auth, 1)) as [string];
    const accepted = await api(pigeon, mine.auth).contacts.bulkDelete({ body: { contactIds: [own, foreign] } });
    const job = await waitForJob(pigeon, `/contacts/bulk/${bodyOf(accepted, 202).jobId}`, mine.auth);
    expect(job).toMatchObject({ updated: 1, skipped: 1 });
    expectEnvelope(await api(pigeon, mine.auth).contacts.get({ params: { id: own } }), 404, 'NOT_FOUND');
    expect((await api(pigeon, theirs.auth).contacts.get({ params: { id: foreign } })).status).toBe(200);
  });

  it('refuses an empty list and more than 1,000 ids with 422', async () => {
    const { auth } = await newProject(pigeon);
    expectEnvelope(await api(pigeon, auth).contacts.bulkDelete({ body: { contactIds: [] } }), 422, 'VALIDATION_ERROR');
    const tooMany = Array.from({ length: 1001 }, () => '01a20000-0000-7000-8000-000000000000');
    expectEnvelope(
      await api(pigeon, auth).contacts.bulkSubscribe({ body: { contactIds: tooMany } }),
      422,
      'VALIDATION_ERROR',
    );
  });
});

describe('fields', () => {
  it('lists fields with inferred types and coverage, their values, and deletes one everywhere', async () => {
    const { auth } = await newProject(pigeon);
    const contacts = [
      { email: 'f1@example.com', data: { plan: 'pro', seats: 2, since: '2024-01-02', vip: true } },
      { email: 'f2@example.com', data: { plan: 'pro', seats: 5, since: '2025-03-04T10:00:00Z' } },
      { email: 'f3@example.com', data: { plan: 'free', mixed: 1 } },
      { email: 'f4@example.com', data: { mixed: 'one' } },
    ];
    for (const body of contacts) await api(pigeon, auth).contacts.create({ body });
    const fields = await api(pigeon, auth).contacts.fields();
    const byField = Object.fromEntries(bodyOf(fields, 200).fields.map((f: { field: string }) => [f.field, f]));
    expect(bodyOf(fields, 200).totalContacts).toBe(4);
    expect(byField.email).toMatchObject({ kind: 'standard', coverage: 100 });
    expect(byField['data.plan']).toMatchObject({ kind: 'custom', type: 'string', count: 3, coverage: 75 });
    expect(byField['data.seats']).toMatchObject({ type: 'number', coverage: 50 });
    expect(byField['data.since']).toMatchObject({ type: 'date' });
    expect(byField['data.vip']).toMatchObject({ type: 'boolean', coverage: 25 });
    expect(byField['data.mixed']).toMatchObject({ type: 'mixed' });

    const values = await api(pigeon, auth).contacts.fieldValues({ params: { field: 'data.plan' } });
    expect(values.body).toEqual({
      field: 'data.plan',
      values: [
        { value: 'pro', count: 2 },
        { value: 'free', count: 1 },
      ],
    });
    const usage = await api(pigeon, auth).contacts.fieldUsage({ params: { field: 'plan' } });
    expect(usage.body).toMatchObject({ field: 'data.plan', segments: [], campaigns: [], workflows: [], templates: [] });

    const accepted = await api(pigeon, auth).contacts.deleteField({ params: { field: 'data.plan' } });
    expect(accepted.status).toBe(202);
    const job = await waitForJob(pigeon, `/contacts/bulk/${bodyOf(accepted, 202).jobId}`, auth);
    expect(job).toMatchObject({ kind: 'delete_field', status: 'completed', updated: 3 });

    const after = await api(pigeon, auth).contacts.fields();
    expect(bodyOf(after, 200).fields.map((f: { field: string }) => f.field)).not.toContain('data.plan');
    expectEnvelope(await api(pigeon, auth).contacts.deleteField({ params: { field: 'email' } }), 400, 'BAD_REQUEST');
  });
});
