import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { HttpResponse } from 'msw';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  type Contact,
  type ContactPage,
  type ContactWithMeta,
  type Job,
  MAX_UPLOAD_BYTES,
  PigeonError,
} from '../src/index.js';
import { BASE, mockPigeonApi, requestId, uuid } from './msw-server.js';

const { route, pigeon } = mockPigeonApi();

const jobId = '0190c2a4-7b7e-7cc0-9a3f-0000000000b1';
const now = '2025-01-01T00:00:00.000Z';

const contact = (n: number): Contact => ({
  id: uuid(n),
  email: `user${n}@example.com`,
  subscribed: true,
  data: { n },
  createdAt: now,
  updatedAt: now,
});

const job = (overrides: Partial<Job> = {}): Job => ({
  id: jobId,
  kind: 'import',
  status: 'queued',
  progress: 0,
  total: 0,
  processed: 0,
  created: 0,
  updated: 0,
  skipped: 0,
  errors: [],
  error: null,
  createdAt: now,
  startedAt: null,
  finishedAt: null,
  ...overrides,
});

/** What the import route received: the content type and the `file` part. */
async function receivedUpload(request: Request) {
  const form = await request.formData();
  const file = form.get('file');
  if (!(file instanceof Blob)) throw new Error('no file part named "file"');
  const parts: string[] = [];
  form.forEach((_, name) => {
    parts.push(name);
  });
  return {
    contentType: request.headers.get('content-type') ?? '',
    parts,
    name: (file as File).name,
    type: file.type,
    bytes: new Uint8Array(await file.arrayBuffer()),
  };
}

const accepted = () => HttpResponse.json({ jobId }, { status: 202 });
const csv = 'email,plan\nada@example.com,pro\nbob@example.com,free\n';
const csvBytes = new TextEncoder().encode(csv);

describe('contacts.list and contacts.all', () => {
  /** Three pages of two contacts, linked by cursors `c1` and `c2`. */
  function threePages() {
    const pages: Record<string, ContactPage> = {
      '': { data: [contact(1), contact(2)], cursor: 'c1', hasMore: true, total: 6 },
      c1: { data: [contact(3), contact(4)], cursor: 'c2', hasMore: true, total: 0 },
      c2: { data: [contact(5), contact(6)], cursor: null, hasMore: false, total: 0 },
    };
    return route('get', '/contacts', (request) => {
      const page = pages[new URL(request.url).searchParams.get('cursor') ?? ''];
      return page ? HttpResponse.json(page) : HttpResponse.json({}, { status: 400 });
    });
  }

  it('list returns one typed page and passes the query', async () => {
    const requests = threePages();
    const page = await pigeon().contacts.list({ search: 'example', limit: 2, subscribed: 'true' });
    expectTypeOf(page).toEqualTypeOf<ContactPage>();
    expect(page).toMatchObject({ cursor: 'c1', hasMore: true, total: 6 });
    expect(page.data.map((c) => c.id)).toEqual([uuid(1), uuid(2)]);
    const query = new URL(requests[0]?.url ?? '').searchParams;
    expect(Object.fromEntries(query)).toEqual({ search: 'example', limit: '2', subscribed: 'true' });
  });

  it('all iterates across 3 pages, following each cursor until hasMore is false', async () => {
    const requests = threePages();
    const iterator = pigeon().contacts.all({ search: 'example', limit: 2 });
    expect(requests).toHaveLength(0); // lazy: nothing is fetched before iteration
    const seen: Contact[] = [];
    for await (const c of iterator) {
      expectTypeOf(c).toEqualTypeOf<Contact>();
      seen.push(c);
    }
    expect(seen.map((c) => c.email)).toEqual([1, 2, 3, 4, 5, 6].map((n) => `user${n}@example.com`));
    const queries = requests.map((r) => Object.fromEntries(new URL(r.url).searchParams));
    expect(queries).toEqual([
      { search: 'example', limit: '2' },
      { search: 'example', limit: '2', cursor: 'c1' },
      { search: 'example', limit: '2', cursor: 'c2' },
    ]);
  });

  it('all stops fetching when the loop breaks early', async () => {
    const requests = threePages();
    for await (const c of pigeon().contacts.all()) {
      if (c.id === uuid(3)) break;
    }
    expect(requests).toHaveLength(2);
  });
});

describe('contacts CRUD and lookup', () => {
  it('create sends the body and returns the contact with _meta', async () => {
    const created: ContactWithMeta = { ...contact(7), _meta: { isNew: true, isUpdate: false } };
    const requests = route('post', '/contacts', () => HttpResponse.json(created, { status: 201 }));
    const result = await pigeon().contacts.create({ email: 'user7@example.com', data: { n: 7 } });
    expectTypeOf(result).toEqualTypeOf<ContactWithMeta>();
    expect(result).toEqual(created);
    expect(result._meta).toEqual({ isNew: true, isUpdate: false });
    expect(await requests[0]?.json()).toEqual({ email: 'user7@example.com', data: { n: 7 } });
    expect(requests[0]?.headers.get('content-type')).toBe('application/json');
  });

  it('turns a 404 on get into a PigeonError with status 404 and code NOT_FOUND, without retrying', async () => {
    const requests = route('get', '/contacts/:id', () =>
      HttpResponse.json(
        {
          success: false,
          error: { code: 'NOT_FOUND', message: 'Contact not found', statusCode: 404, requestId },
          timestamp: now,
        },
        { status: 404 },
      ),
    );
    const error = await pigeon()
      .contacts.get(uuid(9))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PigeonError);
    expect(error).toMatchObject({ status: 404, code: 'NOT_FOUND', message: 'Contact not found', requestId });
    expect(requests).toHaveLength(1);
    expect(requests[0]?.url).toBe(`${BASE}/contacts/${uuid(9)}`);
  });

  it('update, delete, lookup and the field routes hit their paths', async () => {
    const patched = route('patch', '/contacts/:id', () => HttpResponse.json({ ...contact(1), subscribed: false }));
    const deleted = route('delete', '/contacts/:id', () => new HttpResponse(null, { status: 204 }));
    const lookups = route('post', '/contacts/lookup', () =>
      HttpResponse.json({ found: [{ email: 'user1@example.com', id: uuid(1) }], missing: ['x@example.com'] }),
    );
    const values = route('get', '/contacts/fields/:field/values', () =>
      HttpResponse.json({ field: 'data.plan', values: [{ value: 'pro', count: 3 }] }),
    );
    const fieldDelete = route('delete', '/contacts/fields/:field', () => accepted());
    const client = pigeon();

    await expect(client.contacts.update(uuid(1), { subscribed: false })).resolves.toMatchObject({ subscribed: false });
    expect(await patched[0]?.json()).toEqual({ subscribed: false });
    await expect(client.contacts.delete(uuid(1))).resolves.toBeUndefined();
    expect(deleted[0]?.url).toBe(`${BASE}/contacts/${uuid(1)}`);
    await expect(client.contacts.lookup(['user1@example.com', 'x@example.com'])).resolves.toMatchObject({
      missing: ['x@example.com'],
    });
    expect(await lookups[0]?.json()).toEqual({ emails: ['user1@example.com', 'x@example.com'] });
    await client.contacts.fieldValues('data.plan', { limit: 5 });
    expect(values[0]?.url).toBe(`${BASE}/contacts/fields/data.plan/values?limit=5`);
    await expect(client.contacts.deleteField('data.plan')).resolves.toEqual({ jobId });
    expect(fieldDelete).toHaveLength(1);
  });

  it('bulk routes send contactIds', async () => {
    const ids = [uuid(1), uuid(2)];
    const subscribe = route('post', '/contacts/bulk-subscribe', () => accepted());
    const unsubscribe = route('post', '/contacts/bulk-unsubscribe', () => accepted());
    const remove = route('post', '/contacts/bulk-delete', () => accepted());
    const client = pigeon();
    await expect(client.contacts.bulkSubscribe(ids)).resolves.toEqual({ jobId });
    await expect(client.contacts.bulkUnsubscribe(ids)).resolves.toEqual({ jobId });
    await expect(client.contacts.bulkDelete(ids)).resolves.toEqual({ jobId });
    for (const requests of [subscribe, unsubscribe, remove]) {
      expect(await requests[0]?.json()).toEqual({ contactIds: ids });
    }
  });
});

describe('contacts.import', () => {
  const uploads = () => route('post', '/contacts/import', () => accepted());

  it('uploads a Buffer as the multipart part "file"', async () => {
    const requests = uploads();
    await expect(pigeon().contacts.import(Buffer.from(csv))).resolves.toEqual({ jobId });
    expect(requests).toHaveLength(1);
    const upload = await receivedUpload(requests[0] as Request);
    expect(upload.contentType).toMatch(/^multipart\/form-data; boundary=/);
    expect(upload.parts).toEqual(['file']);
    expect(upload).toMatchObject({ name: 'contacts.csv', type: 'text/csv' });
    expect(upload.bytes).toEqual(csvBytes);
  });

  it('uploads a file path, named after the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pigeon-sdk-'));
    try {
      const path = join(dir, 'customers.csv');
      writeFileSync(path, csv);
      const requests = uploads();
      await pigeon().contacts.import(path);
      const upload = await receivedUpload(requests[0] as Request);
      expect(upload.name).toBe('customers.csv');
      expect(upload.bytes).toEqual(csvBytes);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('uploads a Node Readable stream', async () => {
    const requests = uploads();
    const [header, first] = ['email,plan\n', 'ada@example.com,pro\n'];
    const rest = csv.slice(header.length + first.length);
    const stream = Readable.from([Buffer.from(header), first, Buffer.from(rest)]); // bytes and strings
    await pigeon().contacts.import(stream, { filename: 'stream.csv' });
    const upload = await receivedUpload(requests[0] as Request);
    expect(upload.name).toBe('stream.csv');
    expect(upload.bytes).toEqual(csvBytes);
  });

  it('uploads a web ReadableStream and a File, keeping its name and type', async () => {
    const requests = uploads();
    await pigeon().contacts.import(new Blob([csv]).stream());
    await pigeon().contacts.import(new File([csv], 'list.csv', { type: 'application/vnd.ms-excel' }));
    const [fromStream, fromFile] = await Promise.all(requests.map(receivedUpload));
    expect(fromStream?.bytes).toEqual(csvBytes);
    expect(fromFile).toMatchObject({ name: 'list.csv', type: 'application/vnd.ms-excel', bytes: csvBytes });
  });

  it('rejects input over 5 MB with PAYLOAD_TOO_LARGE before sending anything', async () => {
    const requests = uploads();
    const big = Buffer.alloc(MAX_UPLOAD_BYTES + 1, 0x61);
    await expect(pigeon().contacts.import(big)).rejects.toMatchObject({
      name: 'PigeonError',
      status: 0,
      code: 'PAYLOAD_TOO_LARGE',
    });

    // A stream is read only up to the limit, then destroyed.
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    let pulled = 0;
    const stream = Readable.from(
      (function* () {
        for (;;) {
          pulled++;
          yield chunk;
        }
      })(),
    );
    await expect(pigeon().contacts.import(stream)).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect(stream.destroyed).toBe(true);
    expect(pulled).toBeLessThan(10);
    expect(requests).toHaveLength(0);
  });

  it('is not retried on a 5xx (a POST without an Idempotency-Key)', async () => {
    const requests = route('post', '/contacts/import', () => HttpResponse.json({}, { status: 503 }));
    await expect(pigeon().contacts.import(Buffer.from(csv))).rejects.toMatchObject({ status: 503 });
    expect(requests).toHaveLength(1);
    expect(requests[0]?.headers.get('idempotency-key')).toBeNull();
  });
});

describe('contacts.waitForJob', () => {
  it('polls until completed, calling onProgress with every job', async () => {
    const states = [
      job({ kind: 'bulk_subscribe', status: 'queued' }),
      job({ kind: 'bulk_subscribe', status: 'running', progress: 50, total: 2, processed: 1 }),
      job({ kind: 'bulk_subscribe', status: 'completed', progress: 100, total: 2, processed: 2, updated: 2 }),
    ];
    const requests = route('get', '/contacts/bulk/:jobId', (_, n) => HttpResponse.json(states[Math.min(n, 2)]));
    const progress: number[] = [];
    const final = await pigeon().contacts.waitForJob(jobId, {
      kind: 'bulk',
      intervalMs: 5,
      onProgress: (j) => progress.push(j.progress),
    });
    expectTypeOf(final).toEqualTypeOf<Job>();
    expect(final).toEqual(states[2]);
    expect(progress).toEqual([0, 50, 100]);
    expect(requests).toHaveLength(3);
    expect(requests[0]?.url).toBe(`${BASE}/contacts/bulk/${jobId}`);
  });

  it('polls the import route for kind "import" and resolves with a failed job', async () => {
    const failed = job({ status: 'failed', error: 'The file has no email column' });
    const requests = route('get', '/contacts/import/:jobId', (_, n) =>
      HttpResponse.json(n === 0 ? job({ status: 'running' }) : failed),
    );
    await expect(pigeon().contacts.waitForJob(jobId, { kind: 'import', intervalMs: 1 })).resolves.toEqual(failed);
    expect(requests).toHaveLength(2);
  });

  it('rejects with a PigeonError TIMEOUT when the job does not finish in time', async () => {
    route('get', '/contacts/import/:jobId', () => HttpResponse.json(job({ status: 'running', progress: 10 })));
    const error = await pigeon()
      .contacts.waitForJob(jobId, { kind: 'import', intervalMs: 10, timeoutMs: 60 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PigeonError);
    expect(error).toMatchObject({ status: 0, code: 'TIMEOUT', details: { jobId, job: { progress: 10 } } });
  });

  it('stops when the caller aborts', async () => {
    route('get', '/contacts/bulk/:jobId', () => HttpResponse.json(job({ status: 'running' })));
    const controller = new AbortController();
    const wait = pigeon().contacts.waitForJob(
      jobId,
      { kind: 'bulk', intervalMs: 1_000 },
      { signal: controller.signal },
    );
    setTimeout(() => controller.abort(), 30);
    await expect(wait).rejects.toMatchObject({ name: 'AbortError' });
  });
});
