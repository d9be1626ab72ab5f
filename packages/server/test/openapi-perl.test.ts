import { execFile, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject } from './accounts.js';
import { api, bodyOf } from './api.js';
import { startTestPigeon, type TestPigeon } from './helpers.js';

// Perl's OpenAPI::Client from Debian (libopenapi-client-perl; `.ci/run` installs it) reads the
// served /openapi-3.0.json, validates each request against it (patterns included) and sends it.
const script = fileURLToPath(new URL('./fixtures/openapi-client.pl', import.meta.url));

interface Step {
  step: string;
  status: number;
  body: Record<string, unknown> & { data?: unknown };
}

const hasClient = spawnSync('perl', ['-MOpenAPI::Client', '-e1']).status === 0;
if (!hasClient) {
  console.warn(
    'Perl OpenAPI client test skipped: no OpenAPI::Client (Debian package libopenapi-client-perl) on this machine.',
  );
}

describe.skipIf(!hasClient)("Perl's OpenAPI::Client against a running Pigeon", () => {
  let pigeon: TestPigeon;
  beforeAll(async () => {
    pigeon = await startTestPigeon(); // the local outbox: a domain is verified as soon as it is added
  });
  afterAll(() => pigeon?.stop());

  it('sends, tracks and manages contacts; the pattern of an event name refuses a control character client-side', async () => {
    const { project, auth } = await newProject(pigeon);
    const { stdout } = await promisify(execFile)('perl', [script, pigeon.url, project.secretKey, project.publicKey], {
      timeout: 60_000,
    });
    const steps = Object.fromEntries(
      stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Step)
        .map((s) => [s.step, s]),
    );
    expect(steps['domains.create']).toMatchObject({
      status: 201,
      body: { domain: 'perl.example', status: 'verified' },
    });
    expect(steps['emails.send']).toMatchObject({
      status: 200,
      body: { success: true, data: { emails: [{ contact: { email: 'ada@example.com' } }], warnings: [] } },
    });
    // The Idempotency-Key reached Pigeon: the same send again is the 409 of a retry, not a second mail.
    expect(steps['emails.send.again']).toMatchObject({
      status: 409,
      body: { error: { code: 'IDEMPOTENCY_KEY_REUSED', details: { key: 'perl-send-1', originalStatusCode: 200 } } },
    });
    expect(steps['events.track']).toMatchObject({ status: 200, body: { success: true } });
    expect(steps['contacts.create']?.status).toBe(201);
    const listed = ((steps['contacts.list']?.body.data ?? []) as Array<{ email: string }>).map((c) => c.email).sort();
    expect(listed).toEqual(['ada@example.com', 'grace@example.com']);
    // OpenAPI::Client answers a request that fails the document with a local 400 and `errors`.
    expect(steps['events.track.control']).toMatchObject({ status: 400, body: { errors: [expect.anything()] } });
    expect(JSON.stringify(steps['events.track.control']?.body)).toMatch(/event/);

    const contact = bodyOf(await api(pigeon, auth).contacts.list({ query: { search: 'ada' } }), 200);
    expect(contact.data).toMatchObject([{ email: 'ada@example.com', data: { plan: 'perl' } }]);
    const contactId = contact.data[0]?.id ?? '';
    const events = bodyOf(await api(pigeon, auth).events.byContact({ params: { contactId } }), 200);
    expect(events.data.map((e) => e.name)).toContain('signed-up');
  }, 90_000);
});
