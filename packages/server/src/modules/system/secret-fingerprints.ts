import { createHmac } from 'node:crypto';
import { hostname } from 'node:os';
import { type Config, ConfigError, type SecretName } from '../../config/index.js';
import { queryRows, raw, type Sql, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';

/**
 * Every process sharing a database must sign sessions and links and seal DKIM keys with the same
 * secrets, or mail stays queued and links fail on the machines that differ, silently. So each
 * process compares a fingerprint of its secrets with the one the first process recorded, and
 * refuses to start on a difference. A fingerprint is an HMAC of a fixed label under the secret:
 * it tells two secrets apart and gives nothing away about either.
 */
export function fingerprintOf(name: SecretName, secret: string): string {
  return createHmac('sha256', secret).update(`pigeon secret fingerprint v1 ${name}`).digest('hex');
}

function secretsOf(config: Config): Record<SecretName, string> {
  return {
    SESSION_SECRET: config.secrets.session,
    LINK_SIGNING_SECRET: config.secrets.linkSigning,
    DATA_ENCRYPTION_KEY: config.secrets.dataEncryption.current,
  };
}

const recorder = (config: Config) => `${hostname()}:${config.dataDir}`;

const KEEP_RECORDED = raw('DO NOTHING');
const REPLACE_RECORDED = raw(
  'DO UPDATE SET fingerprint = EXCLUDED.fingerprint, recorded_by = EXCLUDED.recorded_by, recorded_at = now()',
);

async function record(db: Queryable, config: Config, name: SecretName, secret: string, onConflict: Sql) {
  await queryRows(
    db,
    sql`INSERT INTO secret_fingerprints (name, fingerprint, recorded_by)
        VALUES (${name}, ${fingerprintOf(name, secret)}, ${recorder(config)})
        ON CONFLICT (name) ${onConflict}`,
  );
}

interface Recorded {
  name: SecretName;
  fingerprint: string;
  recorded_by: string;
  recorded_at: Date;
}

/**
 * Records this process's fingerprints where none is recorded yet, then refuses (a ConfigError naming
 * each variable) when a recorded one differs.
 */
export async function checkSharedSecrets(db: Queryable, config: Config): Promise<void> {
  const mine = Object.entries(secretsOf(config)) as [SecretName, string][];
  for (const [name, secret] of mine) await record(db, config, name, secret, KEEP_RECORDED);
  const recorded = await queryRows<Recorded>(
    db,
    sql`SELECT name, fingerprint, recorded_by, recorded_at FROM secret_fingerprints`,
  );
  const problems = recorded
    .filter((r) => mine.some(([name, secret]) => name === r.name && fingerprintOf(name, secret) !== r.fingerprint))
    .map(
      (r) =>
        `${r.name}: differs from the one every other process on this database uses (first recorded by ` +
        `${r.recorded_by} at ${r.recorded_at.toISOString()}). Set the same ${r.name} on every machine ` +
        `(copy it from that machine's environment, or from secrets.json in its data dir); if you changed it ` +
        'on purpose everywhere, run `pigeon record-secrets` once with the new value.',
    );
  if (problems.length > 0) throw new ConfigError(problems);
}

/** `pigeon record-secrets`, and a data key rotation: this process's secrets become the recorded ones. */
export async function recordSharedSecrets(
  db: Queryable,
  config: Config,
  names: readonly SecretName[] = Object.keys(secretsOf(config)) as SecretName[],
  override: Partial<Record<SecretName, string>> = {},
): Promise<void> {
  const secrets = { ...secretsOf(config), ...override };
  for (const name of names) await record(db, config, name, secrets[name], REPLACE_RECORDED);
}

/**
 * With DATABASE_URL, other machines may share the database: a secret generated into this data
 * dir's secrets.json exists nowhere else, so it is refused until set explicitly.
 */
export function refuseGeneratedSecretsOnSharedDatabase(config: Config): void {
  const { generated, allowGenerated } = config.secrets;
  if (!config.database.url || generated.length === 0 || allowGenerated) return;
  throw new ConfigError([
    `${generated.join(', ')}: DATABASE_URL names a database other machines may share, so set ` +
      `${generated.length > 1 ? 'these' : 'it'} explicitly, the same on every machine (generate with ` +
      '`openssl rand -hex 32`, or copy the values from secrets.json in the data dir of the machine that ran ' +
      `first; this one's is ${config.dataDir}/secrets.json). On the only machine of its database, ` +
      'ALLOW_GENERATED_SECRETS=true keeps the generated ones.',
  ]);
}
