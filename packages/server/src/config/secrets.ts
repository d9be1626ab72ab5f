import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface PersistedSecrets {
  session: string;
  linkSigning: string;
  embeddedPostgresPassword: string;
}

const generate = () => randomBytes(32).toString('hex');

/**
 * Secrets not given in the environment are generated once and kept in the data dir, so
 * sessions and signed links survive restarts without any setup.
 */
export function loadOrCreateSecrets(dataDir: string): PersistedSecrets {
  const file = join(dataDir, 'secrets.json');
  const existing: Partial<PersistedSecrets> = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  const secrets: PersistedSecrets = {
    session: existing.session ?? generate(),
    linkSigning: existing.linkSigning ?? generate(),
    embeddedPostgresPassword: existing.embeddedPostgresPassword ?? generate(),
  };
  if (JSON.stringify(secrets) !== JSON.stringify(existing)) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(file, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  }
  return secrets;
}
