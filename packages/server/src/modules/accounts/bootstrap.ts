import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../../config/index.js';
import { createProject } from '../projects/service.js';
import { createUser } from './service.js';
import { UserSchema } from './user.entity.js';

const FIRST_RUN_EMAIL = 'owner@pigeon.local';

export interface Credentials {
  email: string;
  password: string;
  projectId: string;
  projectName: string;
  publicKey: string;
  secretKey: string;
}

/** Creates a user with a project they own, for scripts (`pigeon create-user`) and the first run. */
export async function createUserWithProject(
  em: EntityManager,
  email: string,
  password: string,
  projectName: string,
): Promise<Credentials> {
  const user = await createUser(em, email, password);
  const project = await createProject(em, user.id, projectName);
  return {
    email,
    password,
    projectId: project.id,
    projectName,
    publicKey: project.publicKey,
    secretKey: project.secretKey,
  };
}

export function describeCredentials(c: Credentials, publicUrl: string): string {
  return [
    `Sign in:  ${publicUrl}/login  as  ${c.email}  /  ${c.password}`,
    `Sent mail (local outbox):  ${publicUrl}/outbox`,
    `Project:  ${c.projectName} (${c.projectId})`,
    `Public key (POST /v1/track only):  ${c.publicKey}`,
    `Secret key (every endpoint):       ${c.secretKey}`,
    '',
    'Track a first event:',
    `curl -X POST ${publicUrl}/v1/track -H "Authorization: Bearer ${c.publicKey}" -H "Content-Type: application/json" -d '{"email":"ada@example.com","event":"signed-up"}'`,
  ].join('\n');
}

/**
 * On the embedded defaults, an empty database gets a local owner and a default project so a new
 * user can call the API at once. The details are printed and kept in the data dir (mode 600).
 */
export async function bootstrapFirstRun(em: EntityManager, config: Config): Promise<string> {
  const file = join(config.dataDir, 'first-run.txt');
  if ((await em.count(UserSchema, {})) > 0) {
    return existsSync(file)
      ? `Sign-in details and the first project's keys: ${file} (current keys: pigeon keys)`
      : 'Project keys: pigeon keys';
  }
  const password = randomBytes(12).toString('base64url');
  const credentials = await createUserWithProject(em, FIRST_RUN_EMAIL, password, 'My project');
  const text = describeCredentials(credentials, config.http.publicUrl);
  writeFileSync(file, `${text}\n`, { mode: 0o600 });
  return `First start: created a local owner and a project (also saved to ${file}).\n\n${text}`;
}
