import { execFile } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows, sql } from '../src/db/query.js';
import { newProject } from './accounts.js';
import { api, bodyOf } from './api.js';
import { startTestPigeon, type TestPigeon } from './helpers.js';

// The official Plunk Node client, installed from the registry at the pinned version (a
// devDependency of this package) and used exactly as a Plunk user's code does, unchanged.
interface PlunkClient {
  emails: { send(body: Record<string, unknown>): Promise<{ success: boolean; data: { emails: unknown[] } }> };
  events: { track(body: Record<string, unknown>): Promise<{ success: boolean; data: { contact: string } }> };
}
const Plunk = createRequire(import.meta.url)('@plunk/node').default as new (
  key: string,
  options?: { baseUrl?: string },
) => PlunkClient;

let pigeon: TestPigeon;
beforeAll(async () => {
  pigeon = await startTestPigeon(); // the local outbox: a domain is verified as soon as it is added
});
afterAll(() => pigeon?.stop());

let projects = 0;
/** A project with its own verified domain `plunkN.example.com` (a domain is verified by one project at a time). */
async function plunkProject(sender?: string) {
  const setup = await newProject(pigeon);
  const domainName = `plunk${++projects}.example.com`;
  const at = (local: string) => `${local}@${domainName}`;
  const defaultFrom = sender && at(sender);
  const domain = await api(pigeon, setup.auth).domains.create({ body: { domain: domainName } });
  expect(bodyOf(domain, 201).status).toBe('verified');
  if (defaultFrom) {
    const patched = await api(pigeon, { cookie: setup.owner.cookie }).users.updateProject({
      params: { id: setup.project.id },
      body: { defaultFrom },
    });
    expect(bodyOf(patched, 200).defaultFrom).toBe(defaultFrom);
  }
  const plunk = new Plunk(setup.project.secretKey, { baseUrl: `${pigeon.url}/v1/` });
  return { ...setup, plunk, at };
}

const storedEmail = async (id: string) =>
  (
    await queryRows(pigeon.deps.db.pool, sql`SELECT from_email, from_name, subject, html FROM emails WHERE id = ${id}`)
  )[0];

describe('@plunk/node 3.0.3 against Pigeon', () => {
  it('sends without `from` through the project default sender, Markdown rendered', async () => {
    const { plunk, at } = await plunkProject('hello');
    const res = await plunk.emails.send({
      to: 'ada@example.com',
      subject: 'Welcome',
      body: '# Welcome\n\nThanks for **signing up**. <img src=x onerror=alert(1)>',
      type: 'markdown',
      name: 'Plunk user',
    });
    expect(res.success).toBe(true);
    expect(res.data.emails).toHaveLength(1);
    const sent = res.data.emails[0] as { email: string; contact: { email: string } };
    expect(sent.contact.email).toBe('ada@example.com');
    const stored = await storedEmail(sent.email);
    expect(stored).toMatchObject({ from_email: at('hello'), from_name: 'Plunk user', subject: 'Welcome' });
    expect(stored?.html).toContain('<h1>Welcome</h1>');
    expect(stored?.html).toContain('<strong>signing up</strong>');
    expect(stored?.html).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });

  it('sends to several recipients with an explicit from', async () => {
    const { plunk, at } = await plunkProject();
    const res = await plunk.emails.send({
      to: ['a@example.com', 'b@example.com'],
      subject: 'Hi',
      body: '<p>Hi</p>',
      from: at('team'),
    });
    expect(res.data.emails).toHaveLength(2);
  });

  it('tracks an event with the secret key, as the Plunk client does', async () => {
    const { plunk, auth } = await plunkProject();
    const res = await plunk.events.track({
      event: 'signed-up',
      email: 'grace@example.com',
      data: { plan: 'pro', coupon: { value: 'WELCOME', persistent: false } },
    });
    expect(res.success).toBe(true);
    const contact = bodyOf(await api(pigeon, auth).contacts.get({ params: { id: res.data.contact } }), 200);
    expect(contact).toMatchObject({ email: 'grace@example.com', subscribed: true, data: { plan: 'pro' } });
    expect(contact.data.coupon).toBeUndefined();
  });

  it("surfaces Pigeon's messages in its errors instead of `Unknown API Error`", async () => {
    const { plunk, project, at } = await plunkProject();
    const noSender = plunk.emails.send({ to: 'ada@example.com', subject: 'Hi', body: 'Hi' });
    await expect(noSender).rejects.toThrow(/defaultFrom.*PATCH \/users\/@me\/projects\/:id/);

    const badType = plunk.emails.send({
      to: 'ada@example.com',
      subject: 'Hi',
      body: 'Hi',
      from: at('team'),
      type: 'text',
    });
    // The top-level message names the field and why: @plunk/node shows only that.
    await expect(badType).rejects.toThrow(/^type: Invalid enum value\. Expected 'html' \| 'markdown', received 'text'/);
    const noSubject = plunk.emails.send({ to: 'ada@example.com', body: 'Hi', from: at('team') } as never);
    await expect(noSubject).rejects.toThrow(/^subject: Required unless a template gives it/);

    const unverified = plunk.emails.send({ to: 'ada@example.com', subject: 'Hi', body: 'Hi', from: 'x@other.example' });
    await expect(unverified).rejects.toThrow('The sender domain other.example is not verified for this project');

    const wrongKey = new Plunk('sk_0000', { baseUrl: `${pigeon.url}/v1/` });
    const denied = await wrongKey.events.track({ event: 'x', email: 'ada@example.com' }).catch((e: Error) => e);
    expect(denied).toBeInstanceOf(Error);
    expect(denied.constructor.name).toBe('TokenError');
    expect((denied as Error).message).not.toBe('Invalid API Credentials Provided');
    expect((denied as Error).message.length).toBeGreaterThan(0);

    const publicKey = new Plunk(project.publicKey, { baseUrl: `${pigeon.url}/v1/` });
    await expect(publicKey.emails.send({ to: 'ada@example.com', subject: 'Hi', body: 'Hi' })).rejects.toThrow(
      /secret key/,
    );
  });
});

describe("docs/coming-from-plunk.md's snippets", () => {
  const page = readFileSync(fileURLToPath(new URL('../../../docs/coming-from-plunk.md', import.meta.url)), 'utf8');
  const snippets = [...page.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');

  it.each([
    ['ESM', '.mjs', 0],
    ['CommonJS', '.cjs', 1],
  ] as const)('runs the %s snippet as written', async (_kind, extension, index) => {
    const snippet = snippets[index] ?? '';
    expect(snippet).toContain('http://localhost:3000/v1/');
    const { project, auth } = await plunkProject('hello');
    // Next to this package's node_modules, where @plunk/node is installed.
    const file = join(fileURLToPath(new URL('.', import.meta.url)), `.docs-plunk-${process.pid}${extension}`);
    writeFileSync(file, snippet.replace('http://localhost:3000/v1/', `${pigeon.url}/v1/`));
    try {
      await promisify(execFile)(process.execPath, [file], {
        env: { PATH: process.env.PATH ?? '', PIGEON_SECRET_KEY: project.secretKey },
      });
    } finally {
      rmSync(file, { force: true });
    }
    const contacts = bodyOf(await api(pigeon, auth).contacts.list(), 200);
    expect(contacts.data).toMatchObject([{ email: 'ada@example.com', data: { plan: 'pro' } }]);
    const rows = await queryRows(pigeon.deps.db.pool, sql`SELECT subject FROM emails WHERE project_id = ${project.id}`);
    expect(rows).toEqual([{ subject: 'Welcome' }]);
  });
});
