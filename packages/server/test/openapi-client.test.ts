import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newProject } from './accounts.js';
import { api, bodyOf } from './api.js';
import { startTestPigeon, type TestPigeon } from './helpers.js';

// A client generated from the served /openapi-3.0.json, as a user of another toolchain would make
// one: openapi-typescript (types) + openapi-fetch (calls). Generators for other languages need a
// JVM download (openapi-generator) or PyPI, neither reachable here; see docs/api/openapi-and-clients.md.
const run = promisify(execFile);
const serverDir = fileURLToPath(new URL('../', import.meta.url));
const bin = (name: string) => join(serverDir, 'node_modules', '.bin', name);
const tsc = fileURLToPath(new URL('../../../node_modules/typescript/bin/tsc', import.meta.url));

let pigeon: TestPigeon;
let dir: string;
beforeAll(async () => {
  pigeon = await startTestPigeon();
  // Inside the package, so the generated client resolves openapi-fetch as an installed dependency would.
  dir = mkdtempSync(join(serverDir, 'test', '.generated-client-'));
});
afterAll(async () => {
  await pigeon?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const CLIENT = `import createClient from 'openapi-fetch';
import type { paths } from './pigeon-api.js';

const client = createClient<paths>({
  baseUrl: process.env.PIGEON_URL,
  headers: { Authorization: \`Bearer \${process.env.PIGEON_SECRET_KEY}\` },
});
const domain = await client.POST('/domains', { body: { domain: 'generated.example' } });
const sent = await client.POST('/v1/send', {
  params: { header: { 'Idempotency-Key': 'generated-send-1' } },
  body: { to: 'gen@example.com', from: 'hi@generated.example', subject: 'Hi', body: '**Hi**', type: 'markdown' },
});
const tracked = await client.POST('/v1/track', { body: { email: 'gen@example.com', event: 'generated' } });
const contacts = await client.GET('/contacts', { params: { query: { limit: 10 } } });
const missing = await client.GET('/contacts/{id}', { params: { path: { id: '00000000-0000-4000-8000-000000000000' } } });
const status: string | undefined = domain.data?.status;
console.log(JSON.stringify({
  domain: status,
  sent: sent.data?.data.emails.map((e) => e.contact.email),
  tracked: tracked.data?.success,
  trackedContact: tracked.data?.data.contact,
  contacts: contacts.data?.data.map((c) => c.email),
  missing: missing.error?.error.code,
}));
`;

it('generates a typed client from /openapi-3.0.json that type-checks and makes real calls', async () => {
  const { project } = await newProject(pigeon);
  const types = join(dir, 'pigeon-api.d.ts');
  await run(bin('openapi-typescript'), [`${pigeon.url}/openapi-3.0.json`, '-o', types], { cwd: dir });
  writeFileSync(join(dir, 'client.mts'), CLIENT);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        module: 'nodenext',
        moduleResolution: 'nodenext',
        target: 'es2022',
        outDir: 'out',
        types: ['node'],
        skipLibCheck: false,
      },
      files: ['client.mts', 'pigeon-api.d.ts'],
    }),
  );
  const compiled = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: dir }).catch(
    (e: { stdout: string }) => e,
  );
  expect(compiled.stdout).toBe('');

  const env = { PATH: process.env.PATH ?? '', PIGEON_URL: pigeon.url, PIGEON_SECRET_KEY: project.secretKey };
  const { stdout } = await run(process.execPath, [join(dir, 'out', 'client.mjs')], { cwd: dir, env });
  const result = JSON.parse(stdout);
  expect(result).toMatchObject({
    domain: 'verified',
    sent: ['gen@example.com'],
    tracked: true,
    contacts: ['gen@example.com'],
    missing: 'NOT_FOUND',
  });
  const events = await api(pigeon, { authorization: `Bearer ${project.secretKey}` }).events.byContact({
    params: { contactId: result.trackedContact },
  });
  expect(bodyOf(events, 200).data.map((e) => e.name)).toContain('generated');
}, 120_000);
