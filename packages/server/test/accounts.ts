import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { queryRows, sql } from '../src/db/query.js';
import { api, bodyOf } from './api.js';
import type { TestPigeon, TestResponse } from './helpers.js';

let counter = 0;
export const uniqueEmail = (prefix = 'user') => `${prefix}-${process.pid}-${++counter}@example.com`;

/** The `pigeon_session=…` pair from a response's Set-Cookie, ready for a Cookie header. */
export function sessionCookie(res: Pick<TestResponse, 'headers'>): string {
  const setCookie = res.headers.get('set-cookie') ?? '';
  const match = /pigeon_session=[^;]+/.exec(setCookie);
  if (!match) throw new Error(`no session cookie in: ${setCookie}`);
  return match[0];
}

export interface SignedUp {
  cookie: string;
  user: { id: string; email: string };
}

export async function signUp(
  pigeon: TestPigeon,
  email = uniqueEmail(),
  password = 'correct horse battery',
): Promise<SignedUp> {
  const res = await api(pigeon).auth.signup({ body: { email, password } });
  return { cookie: sessionCookie(res), user: bodyOf(res, 201) };
}

export interface TestProject {
  id: string;
  publicKey: string;
  secretKey: string;
}

export async function createProject(pigeon: TestPigeon, cookie: string, name = 'Test project'): Promise<TestProject> {
  const project = bodyOf(await api(pigeon, { cookie }).users.createProject({ body: { name } }), 201);
  if (!project.secretKey) throw new Error('a new project shows its creator the secret key');
  return { ...project, secretKey: project.secretKey };
}

/** A fresh user owning a fresh project: the usual starting point of a test. */
export async function newProject(pigeon: TestPigeon) {
  const owner = await signUp(pigeon);
  const project = await createProject(pigeon, owner.cookie);
  return { owner, project, auth: { authorization: `Bearer ${project.secretKey}` } };
}

/** Messages the local outbox transport wrote, oldest first, as raw MIME text. */
export function outboxMessages(pigeon: TestPigeon): string[] {
  const dir = join(pigeon.dataDir, 'outbox');
  let files: string[];
  try {
    files = readdirSync(dir)
      .filter((f) => f.endsWith('.eml')) // not a .eml.partial the transport is still writing
      .sort();
  } catch {
    return [];
  }
  return files.map((f) => decodeQuotedPrintable(readFileSync(join(dir, f), 'utf8')));
}

/** Undoes quoted-printable soft line breaks and escapes, so tests can read mail text as written. */
export const decodeQuotedPrintable = (raw: string) =>
  raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));

/** The newest `Token: …` mailed to an address (in a mail with that subject, when given). */
export function mailedToken(pigeon: TestPigeon, to: string, subject?: string): string {
  const messages = outboxMessages(pigeon).filter(
    (m) => m.includes(`To: ${to}`) && (subject === undefined || m.includes(`Subject: ${subject}`)),
  );
  const match = /Token: ([A-Za-z0-9_-]{20,})/.exec(messages.at(-1) ?? '');
  if (!match?.[1]) throw new Error(`no token mailed to ${to}`);
  return match[1];
}

/** Waits for a `Token: …` mailed to an address (mail sent after the response, e.g. password resets). */
export async function waitForMailedToken(pigeon: TestPigeon, to: string, subject: string): Promise<string> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    try {
      return mailedToken(pigeon, to, subject);
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

/** Polls a job status endpoint until the job completes or fails. */
export async function waitForJob(
  pigeon: TestPigeon,
  path: string,
  headers: Record<string, string>,
  timeoutMs = 20_000,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // untyped: every route (a job status path the caller gives)
    const res = await pigeon.request('GET', path, { headers });
    if (res.status !== 200) throw new Error(`job poll failed: ${res.status} ${res.text}`);
    if (res.body.status === 'completed' || res.body.status === 'failed') return res.body;
    if (Date.now() > deadline) throw new Error(`job did not finish: ${res.text}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Names of the events stored for a contact, oldest first. */
export async function eventNames(pigeon: TestPigeon, contactId: string): Promise<string[]> {
  const rows = await queryRows<{ name: string }>(
    pigeon.deps.db.pool,
    sql`SELECT name FROM events WHERE contact_id = ${contactId} ORDER BY created_at, id`,
  );
  return rows.map((r) => r.name);
}
