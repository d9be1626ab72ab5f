import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface PersistedSecrets {
  session: string;
  linkSigning: string;
  embeddedPostgresPassword: string;
  /** Encrypts DKIM private keys in the database (unless DATA_ENCRYPTION_KEY is set). */
  dataEncryption: string;
  /** The key before the last `pigeon rotate-data-key`, still accepted for reading. */
  dataEncryptionPrevious?: string;
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
    dataEncryption: existing.dataEncryption ?? generate(),
    ...(existing.dataEncryptionPrevious ? { dataEncryptionPrevious: existing.dataEncryptionPrevious } : {}),
  };
  if (JSON.stringify(secrets) !== JSON.stringify(existing)) saveSecrets(dataDir, secrets);
  return secrets;
}

/** Writes the secrets file whole (a new file renamed over the old one), mode 600. */
export function saveSecrets(dataDir: string, secrets: PersistedSecrets): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, 'secrets.json');
  const next = `${file}.${process.pid}.tmp`;
  writeFileSync(next, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  renameSync(next, file);
}
