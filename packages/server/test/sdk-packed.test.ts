import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newProject } from './accounts.js';
import { startTestPigeon, type TestPigeon } from './helpers.js';

// The SDK as a customer gets it: `pnpm pack` of the built package, installed with npm into an empty
// project, used from ESM, CommonJS and strict TypeScript against a real Pigeon.
const run = promisify(execFile);
const sdkDir = fileURLToPath(new URL('../../sdk/', import.meta.url));
const tsc = fileURLToPath(new URL('../../../node_modules/typescript/bin/tsc', import.meta.url));

let pigeon: TestPigeon;
let consumer: string;
let env: Record<string, string>;
beforeAll(async () => {
  consumer = mkdtempSync(join(tmpdir(), 'pigeon-sdk-consumer-'));
  const packDir = join(consumer, 'pack');
  await run('npx', ['-y', 'pnpm@10', 'pack', '--pack-destination', packDir], { cwd: sdkDir });
  const tarball = join(packDir, readdirSync(packDir).find((f) => f.endsWith('.tgz')) ?? '');
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball], { cwd: consumer });
  pigeon = await startTestPigeon();
  const { project } = await newProject(pigeon);
  env = { PATH: process.env.PATH ?? '', PIGEON_URL: pigeon.url, PIGEON_SECRET_KEY: project.secretKey };
}, 240_000);
afterAll(async () => {
  await pigeon?.stop();
  if (consumer) rmSync(consumer, { recursive: true, force: true });
});

const node = async (file: string) => (await run(process.execPath, [file], { cwd: consumer, env })).stdout.trim();

describe('the packed SDK in an empty project', () => {
  it('installs only its declared dependencies and nothing private', async () => {
    const { stdout } = await run('npm', ['ls', '--all', '--json'], { cwd: consumer });
    const deps = JSON.parse(stdout).dependencies['@pigeon/sdk'].dependencies;
    expect(Object.keys(deps).sort()).toEqual(['@ts-rest/core', 'uuidv7', 'zod']);
  });

  it('works from ESM', async () => {
    writeFileSync(
      join(consumer, 'esm.mjs'),
      `import { Pigeon, PigeonError, SDK_VERSION } from '@pigeon/sdk';
const pigeon = new Pigeon({ apiKey: process.env.PIGEON_SECRET_KEY, baseUrl: process.env.PIGEON_URL });
const { contact } = await pigeon.events.track({ email: 'esm@example.com', event: 'packed' });
const read = await pigeon.contacts.get(contact);
const error = await pigeon.contacts.get('00000000-0000-4000-8000-000000000000').catch((e) => e);
console.log(JSON.stringify({ email: read.email, error: error instanceof PigeonError && error.code, name: error.name, SDK_VERSION }));`,
    );
    expect(JSON.parse(await node('esm.mjs'))).toEqual({
      email: 'esm@example.com',
      error: 'NOT_FOUND',
      name: 'PigeonError',
      SDK_VERSION: '0.1.0',
    });
  });

  it('works from CommonJS', async () => {
    writeFileSync(
      join(consumer, 'cjs.cjs'),
      `const { Pigeon, PigeonError } = require('@pigeon/sdk');
const pigeon = new Pigeon({ apiKey: process.env.PIGEON_SECRET_KEY, baseUrl: process.env.PIGEON_URL });
pigeon.contacts.create({ email: 'cjs@example.com', data: { plan: 'pro' } }).then(async (c) => {
  const error = await pigeon.contacts.create({ email: 'not-an-email' }).catch((e) => e);
  console.log(JSON.stringify({ plan: c.data.plan, isNew: c._meta.isNew, error: error instanceof PigeonError && error.status }));
});`,
    );
    expect(JSON.parse(await node('cjs.cjs'))).toEqual({ plan: 'pro', isNew: true, error: 400 });
  });

  it('type-checks strict TypeScript (nodenext) against its declarations', async () => {
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          noEmit: true,
          types: [],
          lib: ['es2023', 'dom'],
        },
        files: ['main.mts', 'main.cts'],
      }),
    );
    writeFileSync(
      join(consumer, 'main.mts'),
      `import { Pigeon, PigeonError, type Contact, type PigeonErrorCode, type SendBody } from '@pigeon/sdk';
const pigeon = new Pigeon({ apiKey: 'sk_x' });
const contact: Contact = await pigeon.contacts.get('id');
const plan: unknown = contact.data.plan;
const body: SendBody = { to: 'a@example.com', subject: 'Hi', body: '# Hi', type: 'markdown' };
// @ts-expect-error: not a body format
const wrong: SendBody = { to: 'a@example.com', subject: 'Hi', body: 'x', type: 'text' };
function describe(code: PigeonErrorCode): string {
  switch (code) {
    case 'IDEMPOTENCY_KEY_REUSED': return 'reused';
    default: return code;
  }
}
// @ts-expect-error: not a code
const bad: PigeonErrorCode = 'NO_SUCH_CODE';
export { body, bad, describe, plan, wrong, PigeonError };`,
    );
    writeFileSync(
      join(consumer, 'main.cts'),
      `import { Pigeon } from '@pigeon/sdk';
export const sent = new Pigeon({ apiKey: 'sk_x' }).emails.send({ to: 'a@example.com', template: 'id' });`,
    );
    const result = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: consumer }).catch(
      (e: { stdout: string }) => e,
    );
    expect(result.stdout).toBe('');
  }, 120_000);
});
