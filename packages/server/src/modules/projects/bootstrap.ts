import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { queryRows, sql } from '../../db/query.js';
import { inTransaction } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import { createUser } from '../accounts/public.js';
import { createDomain } from '../domains/public.js';
import { createProject } from './service.js';

const FIRST_RUN_EMAIL = 'owner@pigeon.local';

export interface Credentials {
  email: string;
  password: string;
  projectId: string;
  projectName: string;
  publicKey: string;
  secretKey: string;
}

/** Creates a user with a project they own (one transaction), for scripts (`pigeon create-user`) and the first run. */
export async function createUserWithProject(
  pool: pg.Pool,
  email: string,
  password: string,
  projectName: string,
): Promise<Credentials> {
  const project = await inTransaction(pool, async (tx) => {
    const user = await createUser(tx, email, password);
    return createProject(tx, user.id, projectName);
  });
  return {
    email,
    password,
    projectId: project.id,
    projectName,
    publicKey: project.publicKey,
    secretKey: project.secretKey,
  };
}

/**
 * The sign-in details, keys and curls to paste. `sender` is a verified sender address of the
 * project (the local outbox verifies a domain at once), for a ready `/v1/send`; without one the text
 * gives the command that adds a domain.
 */
export function describeCredentials(c: Credentials, publicUrl: string, sender?: string): string {
  const curl = (path: string, key: string, body: unknown) =>
    `curl -X POST ${publicUrl}${path} -H "Authorization: Bearer ${key}" -H "Content-Type: application/json" -d '${JSON.stringify(body)}'`;
  const send = sender
    ? [
        `Send a first email (from ${sender}, a domain the local outbox verified at once), then see it at ${publicUrl}/outbox:`,
        curl('/v1/send', c.secretKey, {
          to: 'ada@example.com',
          from: sender,
          subject: 'Hello from Pigeon',
          body: '<p>It works.</p>',
        }),
      ]
    : [
        'To send, add your sender domain, publish the DNS records it returns, then POST /v1/send:',
        curl('/domains', c.secretKey, { domain: 'example.com' }),
      ];
  return [
    `Console:  ${publicUrl}/app/  (sign in as  ${c.email}  /  ${c.password})`,
    // Only the local outbox has a page of sent mail; with a relay the console's mail log shows it.
    ...(sender ? [`Sent mail (local outbox):  ${publicUrl}/outbox`] : []),
    `Project:  ${c.projectName} (${c.projectId})`,
    `Public key (POST /v1/track only):  ${c.publicKey}`,
    `Secret key (every endpoint):       ${c.secretKey}`,
    '',
    'Track a first event:',
    curl('/v1/track', c.publicKey, { email: 'ada@example.com', event: 'signed-up' }),
    '',
    ...send,
  ].join('\n');
}

/** The first project's sender on the local outbox: a domain verified at once, also its default sender. */
const FIRST_RUN_DOMAIN = 'pigeon.local';

async function firstRunSender(deps: AppDeps, projectId: string): Promise<string | undefined> {
  if (deps.mailer.kind !== 'outbox') return undefined;
  await createDomain(deps, projectId, FIRST_RUN_DOMAIN);
  const sender = `hello@${FIRST_RUN_DOMAIN}`;
  await queryRows(deps.db.pool, sql`UPDATE projects SET default_from = ${sender} WHERE id = ${projectId}::uuid`);
  return sender;
}

/**
 * On the embedded defaults, an empty database gets a local owner and a default project so a new
 * user can call the API at once. The details are printed and kept in the data dir (mode 600).
 */
export async function bootstrapFirstRun(deps: AppDeps): Promise<string> {
  const { config } = deps;
  const file = join(config.dataDir, 'first-run.txt');
  if ((await queryRows(deps.db.pool, sql`SELECT 1 FROM users LIMIT 1`)).length > 0) {
    return existsSync(file)
      ? `Sign-in details and the first project's keys: ${file} (current keys: pigeon keys)`
      : 'Project keys: pigeon keys';
  }
  const password = randomBytes(12).toString('base64url');
  const credentials = await createUserWithProject(deps.db.pool, FIRST_RUN_EMAIL, password, 'My project');
  const sender = await firstRunSender(deps, credentials.projectId);
  const text = describeCredentials(credentials, config.http.publicUrl, sender);
  writeFileSync(file, `${text}\n`, { mode: 0o600 });
  return `First start: created a local owner and a project (also saved to ${file}).\n\n${text}`;
}
