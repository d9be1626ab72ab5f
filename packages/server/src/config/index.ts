import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { type Config, type Env, EnvSchema, type ProcessRole, type S3Settings } from './schema.js';
import { loadOrCreateSecrets } from './secrets.js';

export type { Config, ProcessRole, S3Settings } from './schema.js';

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parses and validates the environment once; the result is passed to everything that needs it. */
export function loadConfig(env: Record<string, string | undefined>, role: ProcessRole = 'all'): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = EnvSchema.safeParse(cleaned);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  }
  const e = parsed.data;
  const dataDir = resolve(e.PIGEON_DATA_DIR);
  const persisted = loadOrCreateSecrets(dataDir);
  const port = e.PORT;
  return {
    role,
    http: {
      port,
      host: e.HOST,
      publicUrl: (e.PUBLIC_URL ?? `http://localhost:${port}`).replace(/\/+$/, ''),
      publicUrlGiven: e.PUBLIC_URL !== undefined,
    },
    log: { level: e.LOG_LEVEL },
    dataDir,
    database: {
      url: e.DATABASE_URL,
      poolSize: e.DATABASE_POOL_SIZE,
      embeddedPort: e.EMBEDDED_POSTGRES_PORT,
    },
    mail: { smtpUrl: e.SMTP_URL, outboxDir: resolve(dataDir, 'outbox') },
    dns: { servers: e.DNS_SERVERS?.split(',') },
    secrets: {
      session: e.SESSION_SECRET ?? persisted.session,
      linkSigning: e.LINK_SIGNING_SECRET ?? persisted.linkSigning,
      dataEncryption: e.DATA_ENCRYPTION_KEY
        ? { current: e.DATA_ENCRYPTION_KEY, previous: e.DATA_ENCRYPTION_KEY_PREVIOUS, fromEnvironment: true }
        : { current: persisted.dataEncryption, previous: persisted.dataEncryptionPrevious, fromEnvironment: false },
    },
    jobs: { concurrency: e.JOB_CONCURRENCY, pollIntervalMs: e.JOB_POLL_INTERVAL_MS },
    changeFeed: {
      pollMs: e.CHANGE_FEED_POLL_MS,
      batchSize: e.CHANGE_FEED_BATCH,
      concurrency: e.CHANGE_FEED_CONCURRENCY,
    },
    campaigns: { dispatchIntervalMs: e.CAMPAIGN_DISPATCH_INTERVAL_MS },
    workflows: { concurrency: e.WORKFLOW_CONCURRENCY, pollMs: e.WORKFLOW_POLL_MS },
    segments: {
      countMaxAgeMs: e.SEGMENT_COUNT_MAX_AGE_MINUTES * 60_000,
      queryTimeoutMs: e.SEGMENT_QUERY_TIMEOUT_SECONDS * 1000,
      workMemMb: e.SEGMENT_QUERY_WORK_MEM_MB,
    },
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    delivery: {
      concurrency: e.DELIVERY_CONCURRENCY,
      attachmentLimitBytes: Math.round(e.ATTACHMENT_LIMIT_MB * 1024 * 1024),
      retryBaseMs: e.DELIVERY_RETRY_BASE_MS,
      claimTimeoutSeconds: e.DELIVERY_CLAIM_TIMEOUT_SECONDS,
    },
    webhooks: { allowPrivateNetworks: e.WEBHOOK_ALLOW_PRIVATE_NETWORKS },
    idempotencyTtlHours: e.IDEMPOTENCY_TTL_HOURS,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_SECONDS * 1000,
    workerProcesses: e.WORKER_PROCESSES ?? defaultWorkerProcesses(),
    auth: {
      signupsDisabled: e.DISABLE_SIGNUPS,
      sessionTtlHours: e.SESSION_TTL_HOURS,
      systemMailFrom: e.SYSTEM_MAIL_FROM,
    },
    uploads: {
      quotaBytes: Math.round(e.UPLOADS_QUOTA_MB * 1024 * 1024),
      localDir: resolve(dataDir, 'uploads'),
      s3: s3Settings(e),
    },
  };
}

function s3Settings(e: Env): S3Settings | undefined {
  if (!e.UPLOADS_S3_BUCKET) return undefined;
  const keyId = e.UPLOADS_S3_ACCESS_KEY_ID;
  const secret = e.UPLOADS_S3_SECRET_ACCESS_KEY;
  if (Boolean(keyId) !== Boolean(secret)) {
    throw new ConfigError(['UPLOADS_S3_ACCESS_KEY_ID and UPLOADS_S3_SECRET_ACCESS_KEY are set together or not at all']);
  }
  return {
    bucket: e.UPLOADS_S3_BUCKET,
    region: e.UPLOADS_S3_REGION,
    endpoint: e.UPLOADS_S3_ENDPOINT,
    forcePathStyle: e.UPLOADS_S3_FORCE_PATH_STYLE,
    prefix: e.UPLOADS_S3_PREFIX,
    credentials: keyId && secret ? { accessKeyId: keyId, secretAccessKey: secret } : undefined,
  };
}

/** The process environment is read here and nowhere else. */
export function loadConfigFromEnvironment(role: ProcessRole): Config {
  return loadConfig(process.env, role);
}

/** Every core but the one the API process uses, and at least one worker. */
export function defaultWorkerProcesses(): number {
  return Math.max(1, availableParallelism() - 1);
}

/**
 * The environment of a worker process forked by `pigeon start`: the parent's own, plus what makes
 * the worker share the parent's database (so it never starts an embedded PostgreSQL or creates
 * first-run data), its data dir (outbox), its secrets (generated ones included) and its public URL
 * (the port actually bound when PORT=0).
 */
export function workerEnvironment(config: Config, databaseUrl: string): Record<string, string> {
  const inherited = Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined);
  return {
    ...Object.fromEntries(inherited),
    DATABASE_URL: databaseUrl,
    PIGEON_DATA_DIR: config.dataDir,
    SESSION_SECRET: config.secrets.session,
    LINK_SIGNING_SECRET: config.secrets.linkSigning,
    DATA_ENCRYPTION_KEY: config.secrets.dataEncryption.current,
    ...(config.secrets.dataEncryption.previous
      ? { DATA_ENCRYPTION_KEY_PREVIOUS: config.secrets.dataEncryption.previous }
      : {}),
    PUBLIC_URL: config.http.publicUrl,
  };
}

/** The embedded PostgreSQL password lives with the data it protects. */
export function embeddedPostgresPassword(config: Config): string {
  return loadOrCreateSecrets(config.dataDir).embeddedPostgresPassword;
}
