import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { relayList } from './relays.js';
import {
  type Config,
  type Env,
  EnvSchema,
  type ProcessRole,
  type S3Settings,
  type SesConfig,
  SHARED_SECRETS,
  type SmtpSubmissionConfig,
  type SsoConfig,
  type SsoProviderConfig,
} from './schema.js';
import { loadOrCreateSecrets } from './secrets.js';

export type {
  Config,
  ProcessRole,
  RelayConfig,
  RelayRoutes,
  S3Settings,
  SecretName,
  SesConfig,
  SmtpSubmissionConfig,
  SsoConfig,
  SsoProviderConfig,
  StripeConfig,
} from './schema.js';

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
  const problems = integrationProblems(e);
  const relays = relayList(e, problems);
  if (problems.length) throw new ConfigError(problems);
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
      keepAliveSeconds: e.HTTP_KEEP_ALIVE_SECONDS,
      trustProxy: e.TRUST_PROXY,
      maxConnections: e.HTTP_MAX_CONNECTIONS,
      bodies: { largeBodySlots: e.HTTP_LARGE_BODIES, largeBodyWaitMs: e.HTTP_LARGE_BODY_WAIT_SECONDS * 1000 },
      consoleDir: e.CONSOLE_DIR ? resolve(e.CONSOLE_DIR) : undefined,
    },
    log: { level: e.LOG_LEVEL },
    dataDir,
    database: {
      url: e.DATABASE_URL,
      poolSize: e.DATABASE_POOL_SIZE,
      embeddedPort: e.EMBEDDED_POSTGRES_PORT,
      replica: e.DATABASE_REPLICA_URL
        ? { url: e.DATABASE_REPLICA_URL, maxLagSeconds: e.DATABASE_REPLICA_MAX_LAG_SECONDS }
        : undefined,
    },
    mail: { smtpUrl: e.SMTP_URL, outboxDir: resolve(dataDir, 'outbox'), ses: sesConfig(e), ...relays },
    dns: { servers: e.DNS_SERVERS?.split(',') },
    secrets: {
      session: e.SESSION_SECRET ?? persisted.session,
      linkSigning: e.LINK_SIGNING_SECRET ?? persisted.linkSigning,
      dataEncryption: e.DATA_ENCRYPTION_KEY
        ? { current: e.DATA_ENCRYPTION_KEY, previous: e.DATA_ENCRYPTION_KEY_PREVIOUS, fromEnvironment: true }
        : { current: persisted.dataEncryption, previous: persisted.dataEncryptionPrevious, fromEnvironment: false },
      generated: SHARED_SECRETS.filter((name) => !e[name]),
      allowGenerated: e.ALLOW_GENERATED_SECRETS,
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
      liveCountExactUpTo: e.SEGMENT_LIVE_COUNT_EXACT_UP_TO,
    },
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    delivery: {
      concurrency: e.DELIVERY_CONCURRENCY,
      claimBatch: e.DELIVERY_CLAIM_BATCH,
      pollMs: e.DELIVERY_POLL_MS,
      attachmentLimitBytes: Math.round(e.ATTACHMENT_LIMIT_MB * 1024 * 1024),
      retryBaseMs: e.DELIVERY_RETRY_BASE_MS,
      retryMaxMs: e.DELIVERY_RETRY_MAX_MS,
      lifetimeMs: Math.round(e.DELIVERY_LIFETIME_HOURS * 3_600_000),
      claimTimeoutSeconds: e.DELIVERY_CLAIM_TIMEOUT_SECONDS,
      probeBaseMs: e.DELIVERY_PROBE_BASE_MS,
      probeMaxMs: e.DELIVERY_PROBE_MAX_MS,
      outageNotifyMs: Math.round(e.DELIVERY_OUTAGE_NOTIFY_MINUTES * 60_000),
    },
    webhooks: {
      allowPrivateNetworks: e.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
      concurrency: e.WEBHOOK_CONCURRENCY,
      endpointConcurrency: e.WEBHOOK_ENDPOINT_CONCURRENCY,
      timeoutMs: e.WEBHOOK_TIMEOUT_SECONDS * 1000,
      claimTimeoutSeconds: e.WEBHOOK_CLAIM_TIMEOUT_SECONDS,
      pollMs: e.WEBHOOK_POLL_MS,
    },
    idempotencyTtlHours: e.IDEMPOTENCY_TTL_HOURS,
    retention: { intervalMinutes: e.RETENTION_INTERVAL_MINUTES, dayMs: e.RETENTION_DAY_SECONDS * 1000 },
    track: {
      idempotencyTtlMinutes: e.IDEMPOTENCY_TRACK_TTL_MINUTES,
      batchMaxRows: e.TRACK_BATCH_MAX_ROWS,
      batchStatements: e.TRACK_BATCH_STATEMENTS,
      batchStallMs: e.TRACK_BATCH_STALL_MS,
    },
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_SECONDS * 1000,
    workerProcesses: e.WORKER_PROCESSES ?? defaultWorkerProcesses(),
    workerMaxOldSpaceMb: e.WORKER_MAX_OLD_SPACE_MB,
    apiMaxOldSpaceMb: e.API_MAX_OLD_SPACE_MB,
    apiHeapGrowingPercent: e.API_HEAP_GROWING_PERCENT,
    metrics: { port: e.METRICS_PORT, host: e.METRICS_HOST },
    health: { heartbeatMs: e.WORKER_HEARTBEAT_SECONDS * 1000, maxFeedLagSeconds: e.READY_MAX_FEED_LAG_SECONDS },
    auth: {
      signupsDisabled: e.DISABLE_SIGNUPS,
      sessionTtlHours: e.SESSION_TTL_HOURS,
      systemMailFrom: e.SYSTEM_MAIL_FROM,
    },
    sso: ssoConfig(e),
    verify: { dnsTimeoutMs: e.VERIFY_DNS_TIMEOUT_MS, dnsCacheSize: e.VERIFY_DNS_CACHE_SIZE },
    governor: {
      enabled: e.GOVERNOR_ENABLED,
      maxRate: e.GOVERNOR_MAX_RATE,
      minRate: Math.min(e.GOVERNOR_MIN_RATE, e.GOVERNOR_MAX_RATE),
      decreaseFactor: e.GOVERNOR_DECREASE_FACTOR,
      recoveryPerSecond: e.GOVERNOR_RECOVERY_PER_SECOND,
    },
    deliverability: {
      bounceDomain: e.BOUNCE_DOMAIN ?? new URL(e.PUBLIC_URL ?? 'http://localhost').hostname,
      inbound: {
        port: e.INBOUND_SMTP_PORT,
        host: e.INBOUND_SMTP_HOST,
        maxBytes: e.INBOUND_SMTP_MAX_BYTES,
        maxClients: e.INBOUND_SMTP_MAX_CLIENTS,
        messagesPerMinute: e.INBOUND_SMTP_MESSAGES_PER_MINUTE,
      },
      dmarcReports: {
        address:
          e.DMARC_REPORT_ADDRESS ?? `dmarc@${e.BOUNCE_DOMAIN ?? new URL(e.PUBLIC_URL ?? 'http://localhost').hostname}`,
        maxBytes: e.DMARC_REPORT_MAX_BYTES,
      },
      health: {
        window: e.HEALTH_WINDOW,
        minSample: e.HEALTH_MIN_SAMPLE,
        bounceThreshold: e.HEALTH_BOUNCE_THRESHOLD,
        complaintThreshold: e.HEALTH_COMPLAINT_THRESHOLD,
      },
    },
    smtpSubmission: smtpSubmissionConfig(e, dataDir),
    billing: {
      stripe:
        e.STRIPE_SECRET_KEY && e.STRIPE_WEBHOOK_SECRET && e.STRIPE_PRICE_ID
          ? { secretKey: e.STRIPE_SECRET_KEY, webhookSecret: e.STRIPE_WEBHOOK_SECRET, priceId: e.STRIPE_PRICE_ID }
          : undefined,
    },
    uploads: {
      quotaBytes: Math.round(e.UPLOADS_QUOTA_MB * 1024 * 1024),
      localDir: resolve(dataDir, 'uploads'),
      s3: s3Settings(e),
    },
  };
}

/** Settings that only make sense together: half a Stripe setup, or two mail transports at once. */
function integrationProblems(e: Env): string[] {
  const problems: string[] = [];
  const stripe = [e.STRIPE_SECRET_KEY, e.STRIPE_WEBHOOK_SECRET, e.STRIPE_PRICE_ID];
  if (stripe.some(Boolean) && !stripe.every(Boolean)) {
    problems.push(
      'STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET and STRIPE_PRICE_ID: set all three to turn billing on, or none',
    );
  }
  if (e.SES_REGION && e.SMTP_URL) problems.push('SES_REGION and SMTP_URL: choose one mail transport');
  if (Boolean(e.AWS_ACCESS_KEY_ID) !== Boolean(e.AWS_SECRET_ACCESS_KEY)) {
    problems.push('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: set both, or neither (the AWS default chain)');
  }
  if (Boolean(e.SMTP_SUBMISSION_TLS_CERT) !== Boolean(e.SMTP_SUBMISSION_TLS_KEY)) {
    problems.push(
      'SMTP_SUBMISSION_TLS_CERT and SMTP_SUBMISSION_TLS_KEY: set both, or neither (a generated certificate)',
    );
  }
  return [...problems, ...ssoProblems(e)];
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** An issuer over plain http is accepted on loopback only (a provider on the same machine, or a test). */
export const isLoopbackHttp = (url: string) => {
  const u = new URL(url);
  return u.protocol === 'http:' && LOOPBACK_HOSTS.has(u.hostname);
};

function ssoProblems(e: Env): string[] {
  const problems: string[] = [];
  const groups: [string, (string | undefined)[]][] = [
    [
      'OIDC_ISSUER_URL, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET',
      [e.OIDC_ISSUER_URL, e.OIDC_CLIENT_ID, e.OIDC_CLIENT_SECRET],
    ],
    ['GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET', [e.GOOGLE_CLIENT_ID, e.GOOGLE_CLIENT_SECRET]],
    ['GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET', [e.GITHUB_CLIENT_ID, e.GITHUB_CLIENT_SECRET]],
  ];
  for (const [names, values] of groups) {
    if (values.some(Boolean) && !values.every(Boolean)) problems.push(`${names}: set all of them, or none`);
  }
  const issuer = e.OIDC_ISSUER_URL;
  if (issuer && !issuer.startsWith('https://') && !isLoopbackHttp(issuer)) {
    problems.push('OIDC_ISSUER_URL: must be an https:// URL (plain http only on a loopback address)');
  }
  if (issuer && !e.OIDC_SCOPES.split(' ').includes('openid')) {
    problems.push('OIDC_SCOPES: must include openid');
  }
  return problems;
}

function ssoConfig(e: Env): SsoConfig {
  const providers: SsoProviderConfig[] = [];
  if (e.OIDC_ISSUER_URL && e.OIDC_CLIENT_ID && e.OIDC_CLIENT_SECRET) {
    providers.push({
      id: 'oidc',
      name: e.OIDC_DISPLAY_NAME,
      protocol: 'oidc',
      issuer: e.OIDC_ISSUER_URL.replace(/\/+$/, ''),
      clientId: e.OIDC_CLIENT_ID,
      clientSecret: e.OIDC_CLIENT_SECRET,
      scopes: e.OIDC_SCOPES,
    });
  }
  if (e.GOOGLE_CLIENT_ID && e.GOOGLE_CLIENT_SECRET) {
    providers.push({
      id: 'google',
      name: 'Google',
      protocol: 'oidc',
      issuer: 'https://accounts.google.com',
      clientId: e.GOOGLE_CLIENT_ID,
      clientSecret: e.GOOGLE_CLIENT_SECRET,
      scopes: 'openid email profile',
    });
  }
  if (e.GITHUB_CLIENT_ID && e.GITHUB_CLIENT_SECRET) {
    providers.push({
      id: 'github',
      name: 'GitHub',
      protocol: 'github',
      issuer: 'https://github.com',
      clientId: e.GITHUB_CLIENT_ID,
      clientSecret: e.GITHUB_CLIENT_SECRET,
      // user:email lists the addresses with their verified flag (the profile's public email may be unverified).
      scopes: 'read:user user:email',
    });
  }
  return {
    providers,
    allowedEmailDomains: e.SSO_ALLOWED_EMAIL_DOMAINS?.split(',').map((d) => d.trim()) ?? [],
    createAccounts: e.SSO_CREATE_ACCOUNTS,
  };
}

function smtpSubmissionConfig(e: Env, dataDir: string): SmtpSubmissionConfig {
  return {
    port: e.SMTP_SUBMISSION_PORT,
    tlsPort: e.SMTP_SUBMISSION_TLS_PORT,
    host: e.SMTP_SUBMISSION_HOST,
    hostname: new URL(e.PUBLIC_URL ?? 'http://localhost').hostname,
    tls:
      e.SMTP_SUBMISSION_TLS_CERT && e.SMTP_SUBMISSION_TLS_KEY
        ? { certFile: resolve(e.SMTP_SUBMISSION_TLS_CERT), keyFile: resolve(e.SMTP_SUBMISSION_TLS_KEY) }
        : undefined,
    generatedTlsDir: resolve(dataDir, 'smtp-submission'),
    allowPlainAuth: e.SMTP_SUBMISSION_ALLOW_PLAIN_AUTH,
    maxBytes: e.SMTP_SUBMISSION_MAX_BYTES,
    maxClients: e.SMTP_SUBMISSION_MAX_CLIENTS,
    authFailuresPerIp: e.SMTP_SUBMISSION_AUTH_FAILURES,
  };
}

function sesConfig(e: Env): SesConfig | undefined {
  if (!e.SES_REGION) return undefined;
  return {
    region: e.SES_REGION,
    configurationSet: e.SES_CONFIGURATION_SET,
    credentials:
      e.AWS_ACCESS_KEY_ID && e.AWS_SECRET_ACCESS_KEY
        ? {
            accessKeyId: e.AWS_ACCESS_KEY_ID,
            secretAccessKey: e.AWS_SECRET_ACCESS_KEY,
            sessionToken: e.AWS_SESSION_TOKEN,
          }
        : undefined,
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
/** This process's environment as it is passed on to a process it starts (`pigeon start`'s API process). */
export function inheritedEnvironment(): Record<string, string> {
  const inherited = Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined);
  return Object.fromEntries(inherited);
}

export function workerEnvironment(config: Config, databaseUrl: string): Record<string, string> {
  return {
    ...inheritedEnvironment(),
    DATABASE_URL: databaseUrl,
    PIGEON_DATA_DIR: config.dataDir,
    SESSION_SECRET: config.secrets.session,
    LINK_SIGNING_SECRET: config.secrets.linkSigning,
    DATA_ENCRYPTION_KEY: config.secrets.dataEncryption.current,
    ...(config.secrets.dataEncryption.previous
      ? { DATA_ENCRYPTION_KEY_PREVIOUS: config.secrets.dataEncryption.previous }
      : {}),
    PUBLIC_URL: config.http.publicUrl,
    BOUNCE_DOMAIN: config.deliverability.bounceDomain,
  };
}

/** The embedded PostgreSQL password lives with the data it protects. */
export function embeddedPostgresPassword(config: Config): string {
  return loadOrCreateSecrets(config.dataDir).embeddedPostgresPassword;
}
