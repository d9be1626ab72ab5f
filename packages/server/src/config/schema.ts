import type { MailTransportKind, OAuthProviderId, RelayStream } from '@pigeon/contract';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const url = z.string().url();
/** A relay's name: what routes, metrics, `transport_status` and `emails.relay` call it. */
export const RELAY_NAME = /^[a-z][a-z0-9_-]{0,31}$/;
const relayRoute = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,31}(\s*,\s*[a-z][a-z0-9_-]{0,31})*$/, 'must be a comma-separated list of relay names');

const TRUST_PRESETS = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * `TRUST_PROXY` as express's `trust proxy` takes it: `false` (believe no X-Forwarded-* header), a
 * hop count, or addresses, subnets and presets. `true` (believe anyone) is refused: behind no proxy
 * it lets every client choose its own IP for the rate limits. Undefined when it is none of these.
 */
export function trustProxySetting(value: string): false | number | string[] | undefined {
  const text = value.trim().toLowerCase();
  if (text === 'false' || text === 'none') return false;
  if (/^\d+$/.test(text)) return Number(text);
  const entries = text.split(',').map((entry) => entry.trim());
  const valid = (entry: string) => {
    if (TRUST_PRESETS.has(entry)) return true;
    const [address, bits, ...rest] = entry.split('/');
    const isAddress = (a: string) => ipaddr.IPv4.isValidFourPartDecimal(a) || ipaddr.IPv6.isValid(a);
    if (rest.length > 0 || !address || !isAddress(address)) return false;
    if (bits === undefined) return true;
    const max = ipaddr.parse(address).kind() === 'ipv4' ? 32 : 128;
    return /^\d+$/.test(bits) && Number(bits) <= max;
  };
  return entries.every(valid) ? entries : undefined;
}

/**
 * Every environment variable Pigeon reads, with its default. Grouped per concern in `Config`.
 * README's configuration table mirrors this list.
 */
export const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  PUBLIC_URL: url.optional(),
  HTTP_KEEP_ALIVE_SECONDS: z.coerce.number().int().min(1).max(3600).default(72),
  /** Which peers' X-Forwarded-* headers are believed (express's `trust proxy`); see `trustProxySetting`. */
  TRUST_PROXY: z
    .string()
    .min(1)
    .default('loopback')
    .transform((value, ctx) => {
      const parsed = trustProxySetting(value);
      if (parsed === undefined) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          message:
            'must be false, a number of proxy hops, or a comma-separated list of IP addresses, CIDR subnets and presets (loopback, linklocal, uniquelocal)',
        });
        return z.NEVER;
      }
      return parsed;
    }),
  HTTP_MAX_CONNECTIONS: z.coerce.number().int().min(1).max(1_000_000).default(4096),
  HTTP_LARGE_BODIES: z.coerce.number().int().min(1).max(64).default(2),
  HTTP_LARGE_BODY_WAIT_SECONDS: z.coerce.number().int().min(1).max(600).default(30),
  /** The built console served at /app/ (default: packages/console/dist of this checkout). */
  CONSOLE_DIR: z.string().min(1).optional(),
  API_MAX_OLD_SPACE_MB: z.coerce.number().int().min(0).max(65_536).default(768),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  PIGEON_DATA_DIR: z.string().min(1).default('./.pigeon'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  /** A streaming replica for reads that may trail the primary (analytics, event stats); see README. */
  DATABASE_REPLICA_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  DATABASE_REPLICA_MAX_LAG_SECONDS: z.coerce.number().int().min(1).max(3600).default(10),
  EMBEDDED_POSTGRES_PORT: z.coerce.number().int().min(1).max(65535).default(54329),
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL')
    .optional(),
  /** Named relays, `name=smtp://…` or `name=ses`, comma-separated (see `relayList` in config/index.ts). */
  RELAYS: z.string().optional(),
  RELAY_ROUTE_TRANSACTIONAL: relayRoute.optional(),
  RELAY_ROUTE_CAMPAIGN: relayRoute.optional(),
  DNS_SERVERS: z
    .string()
    .regex(/^[0-9a-fA-F.:[\]]+(,[0-9a-fA-F.:[\]]+)*$/, 'must be a comma-separated list of IP[:port]')
    .optional(),
  SESSION_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  LINK_SIGNING_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  DATA_ENCRYPTION_KEY: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hexadecimal characters (32 bytes)')
    .optional(),
  DATA_ENCRYPTION_KEY_PREVIOUS: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hexadecimal characters (32 bytes)')
    .optional(),
  /** With DATABASE_URL, accept secrets generated into this data dir (one machine only). */
  ALLOW_GENERATED_SECRETS: bool.default('false'),
  SHUTDOWN_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(600).default(25),
  /** Unset: one per CPU core but the API's (at least 1); see `defaultWorkerProcesses()`. */
  WORKER_PROCESSES: z.coerce.number().int().min(0).max(256).optional(),
  /** V8's old-generation limit of each worker process in MB (0: V8's default); see README. */
  /** The metrics listener (Prometheus text format at /metrics); unset: no listener. */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  WORKER_HEARTBEAT_SECONDS: z.coerce.number().int().min(1).max(300).default(10),
  READY_MAX_FEED_LAG_SECONDS: z.coerce.number().int().min(1).max(86_400).default(300),
  WORKER_MAX_OLD_SPACE_MB: z.coerce.number().int().min(0).max(65_536).default(112),
  API_HEAP_GROWING_PERCENT: z.coerce.number().int().min(0).max(400).default(50),
  JOB_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(10),
  JOB_POLL_INTERVAL_MS: z.coerce.number().int().min(50).max(60_000).default(5000),
  CHANGE_FEED_POLL_MS: z.coerce.number().int().min(10).max(600_000).default(400),
  CHANGE_FEED_BATCH: z.coerce.number().int().min(1).max(10_000).default(500),
  CHANGE_FEED_CONCURRENCY: z.coerce.number().int().min(1).max(8).default(2),
  CAMPAIGN_DISPATCH_INTERVAL_MS: z.coerce.number().int().min(50).max(600_000).default(1000),
  WORKFLOW_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  WORKFLOW_POLL_MS: z.coerce.number().int().min(10).max(600_000).default(30_000),
  SEGMENT_QUERY_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  SEGMENT_QUERY_WORK_MEM_MB: z.coerce.number().int().min(4).max(4096).default(64),
  SEGMENT_COUNT_MAX_AGE_MINUTES: z.coerce.number().int().min(1).max(10_080).default(15),
  SEGMENT_LIVE_COUNT_EXACT_UP_TO: z.coerce.number().int().min(1).max(100_000_000).default(100_000),
  DISABLE_SIGNUPS: bool.default('false'),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: bool.default('false'),
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(64),
  WEBHOOK_ENDPOINT_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(16),
  WEBHOOK_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(120).default(15),
  WEBHOOK_CLAIM_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(3600).default(120),
  WEBHOOK_POLL_MS: z.coerce.number().int().min(10).max(600_000).default(500),
  DELIVERY_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(8),
  DELIVERY_CLAIM_BATCH: z.coerce.number().int().min(1).max(100).default(10),
  DELIVERY_POLL_MS: z.coerce.number().int().min(10).max(600_000).default(1000),
  DELIVERY_CLAIM_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(3600).default(120),
  DELIVERY_RETRY_BASE_MS: z.coerce.number().int().min(10).max(3_600_000).default(300_000),
  DELIVERY_RETRY_MAX_MS: z.coerce.number().int().min(10).max(86_400_000).default(3_600_000),
  DELIVERY_LIFETIME_HOURS: z.coerce
    .number()
    .min(0.0001)
    .max(24 * 30)
    .default(72),
  DELIVERY_PROBE_BASE_MS: z.coerce.number().int().min(10).max(3_600_000).default(5000),
  DELIVERY_PROBE_MAX_MS: z.coerce.number().int().min(10).max(3_600_000).default(300_000),
  DELIVERY_OUTAGE_NOTIFY_MINUTES: z.coerce.number().min(0).max(10_080).default(30),
  GOVERNOR_ENABLED: bool.default('true'),
  GOVERNOR_MAX_RATE: z.coerce.number().positive().max(1_000_000).default(2000),
  GOVERNOR_MIN_RATE: z.coerce.number().positive().max(1_000_000).default(0.2),
  GOVERNOR_DECREASE_FACTOR: z.coerce.number().gt(0).lt(1).default(0.5),
  GOVERNOR_RECOVERY_PER_SECOND: z.coerce.number().positive().max(1_000_000).default(5),
  ATTACHMENT_LIMIT_MB: z.coerce.number().min(1).max(40).default(10),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(1000),
  IDEMPOTENCY_TTL_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 30)
    .default(24),
  IDEMPOTENCY_TRACK_TTL_MINUTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(60 * 24 * 30)
    .default(60),
  RETENTION_INTERVAL_MINUTES: z.coerce.number().int().min(1).max(1440).default(15),
  RETENTION_DAY_SECONDS: z.coerce.number().int().min(60).max(86_400).default(86_400),
  TRACK_BATCH_MAX_ROWS: z.coerce.number().int().min(1).max(500).default(64),
  TRACK_BATCH_STATEMENTS: z.coerce.number().int().min(1).max(64).default(2),
  TRACK_BATCH_STALL_MS: z.coerce.number().int().min(0).max(60_000).default(100),
  SESSION_TTL_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 365)
    .default(24 * 7),
  SYSTEM_MAIL_FROM: z.string().min(3).default('Pigeon <pigeon@localhost>'),
  VERIFY_DNS_TIMEOUT_MS: z.coerce.number().int().min(50).max(30_000).default(2000),
  VERIFY_DNS_CACHE_SIZE: z.coerce.number().int().min(100).max(10_000_000).default(100_000),
  BOUNCE_DOMAIN: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/, 'must be a domain name')
    .optional(),
  /** Unset: no inbound SMTP receiver (bounces then come back only as SMTP replies or SNS notifications). */
  INBOUND_SMTP_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  INBOUND_SMTP_HOST: z.string().min(1).default('0.0.0.0'),
  INBOUND_SMTP_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(100 * 1024 * 1024)
    .default(2 * 1024 * 1024),
  INBOUND_SMTP_MAX_CLIENTS: z.coerce.number().int().min(1).max(10_000).default(50),
  INBOUND_SMTP_MESSAGES_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(600),
  /** The `rua` mailbox of DMARC aggregate reports (default `dmarc@<BOUNCE_DOMAIN>`); see `modules/dmarc-reports`. */
  DMARC_REPORT_ADDRESS: z.string().trim().toLowerCase().email().optional(),
  /** A report larger than this once decompressed is refused (zip bombs). */
  DMARC_REPORT_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(200 * 1024 * 1024)
    .default(10 * 1024 * 1024),
  /** Unset: no SMTP submission listener (STARTTLS); see `modules/smtp-submission`. */
  SMTP_SUBMISSION_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Unset: no implicit-TLS submission listener (port 465's way). */
  SMTP_SUBMISSION_TLS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  SMTP_SUBMISSION_HOST: z.string().min(1).default('0.0.0.0'),
  /** PEM files; unset: a self-signed certificate generated into the data dir. */
  SMTP_SUBMISSION_TLS_CERT: z.string().min(1).optional(),
  SMTP_SUBMISSION_TLS_KEY: z.string().min(1).optional(),
  SMTP_SUBMISSION_ALLOW_PLAIN_AUTH: bool.default('false'),
  SMTP_SUBMISSION_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(40 * 1024 * 1024)
    .default(25 * 1024 * 1024),
  SMTP_SUBMISSION_MAX_CLIENTS: z.coerce.number().int().min(1).max(10_000).default(100),
  SMTP_SUBMISSION_AUTH_FAILURES: z.coerce.number().int().min(1).max(10_000).default(10),
  HEALTH_WINDOW: z.coerce.number().int().min(10).max(1_000_000).default(1000),
  HEALTH_MIN_SAMPLE: z.coerce.number().int().min(1).max(1_000_000).default(200),
  HEALTH_BOUNCE_THRESHOLD: z.coerce.number().min(0).max(1).default(0.05),
  HEALTH_COMPLAINT_THRESHOLD: z.coerce.number().min(0).max(1).default(0.001),
  STRIPE_SECRET_KEY: z
    .string()
    .regex(/^(sk|rk)_/, 'must be a Stripe secret or restricted key (sk_… or rk_…)')
    .optional(),
  STRIPE_WEBHOOK_SECRET: z
    .string()
    .regex(/^whsec_/, 'must be a Stripe webhook signing secret (whsec_…)')
    .optional(),
  STRIPE_PRICE_ID: z
    .string()
    .regex(/^price_/, 'must be a Stripe price id (price_…)')
    .optional(),
  SES_REGION: z
    .string()
    .regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, 'must be an AWS region, e.g. eu-west-1')
    .optional(),
  SES_CONFIGURATION_SET: z.string().min(1).max(64).optional(),
  AWS_ACCESS_KEY_ID: z.string().min(16).optional(),
  AWS_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  AWS_SESSION_TOKEN: z.string().min(1).optional(),
  UPLOADS_QUOTA_MB: z.coerce.number().positive().max(1_000_000).default(100),
  UPLOADS_S3_BUCKET: z.string().min(3).max(63).optional(),
  UPLOADS_S3_REGION: z.string().min(1).default('us-east-1'),
  UPLOADS_S3_ENDPOINT: url.optional(),
  UPLOADS_S3_FORCE_PATH_STYLE: bool.default('false'),
  UPLOADS_S3_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9!_.*'()/-]*$/, 'must be a plain S3 key prefix')
    .default(''),
  UPLOADS_S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  UPLOADS_S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  OIDC_ISSUER_URL: url.optional(),
  OIDC_CLIENT_ID: z.string().min(1).optional(),
  OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  OIDC_SCOPES: z
    .string()
    .regex(/^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/, 'must be scopes separated by single spaces')
    .default('openid email profile'),
  OIDC_DISPLAY_NAME: z.string().trim().min(1).max(60).default('Single sign-on'),
  GOOGLE_CLIENT_ID: z.string().min(1).optional(),
  GOOGLE_CLIENT_SECRET: z.string().min(1).optional(),
  GITHUB_CLIENT_ID: z.string().min(1).optional(),
  GITHUB_CLIENT_SECRET: z.string().min(1).optional(),
  SSO_ALLOWED_EMAIL_DOMAINS: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^[a-z0-9.-]+(\s*,\s*[a-z0-9.-]+)*$/, 'must be a comma-separated list of domains')
    .optional(),
  SSO_CREATE_ACCOUNTS: bool.default('false'),
});
export type Env = z.infer<typeof EnvSchema>;

export type ProcessRole = 'all' | 'api' | 'worker';

/** The secrets every process sharing a database must hold alike, by their variable. */
export const SHARED_SECRETS = ['SESSION_SECRET', 'LINK_SIGNING_SECRET', 'DATA_ENCRYPTION_KEY'] as const;
export type SecretName = (typeof SHARED_SECRETS)[number];

export interface Config {
  role: ProcessRole;
  http: {
    port: number;
    host: string;
    publicUrl: string;
    publicUrlGiven: boolean;
    keepAliveSeconds: number;
    /** express's `trust proxy`: false, a hop count, or addresses, subnets and presets (`loopback`). */
    trustProxy: false | number | string[];
    /** Open connections at most (Node's `server.maxConnections`): more are closed at once. */
    maxConnections: number;
    bodies: { largeBodySlots: number; largeBodyWaitMs: number };
    /** Where the built console is (unset: beside this package in the checkout). */
    consoleDir: string | undefined;
  };
  log: { level: Env['LOG_LEVEL'] };
  dataDir: string;
  database: {
    url: string | undefined;
    poolSize: number;
    embeddedPort: number;
    /** Set with DATABASE_REPLICA_URL: reads that may trail the primary go there while it keeps up. */
    replica: { url: string; maxLagSeconds: number } | undefined;
  };
  mail: {
    smtpUrl: string | undefined;
    outboxDir: string;
    ses: SesConfig | undefined;
    /** Every relay, in `RELAYS` order (one without it: `smtp`, `ses` or `outbox`). */
    relays: RelayConfig[];
    routes: RelayRoutes;
  };
  dns: { servers: string[] | undefined };
  secrets: {
    session: string;
    linkSigning: string;
    /** AES-256-GCM keys (hex) for secrets stored in the database: DKIM private keys. */
    dataEncryption: { current: string; previous?: string; fromEnvironment: boolean };
    /** The secrets taken from this data dir's secrets.json (generated here), not from the environment. */
    generated: SecretName[];
    /** ALLOW_GENERATED_SECRETS: the operator says this is the only machine on its database. */
    allowGenerated: boolean;
  };
  jobs: { concurrency: number; pollIntervalMs: number };
  changeFeed: { pollMs: number; batchSize: number; concurrency: number };
  workflows: {
    /** Execution loops per worker process. */
    concurrency: number;
    /** Longest sleep of an idle loop: it wakes at its next timer, or at once on a NOTIFY (new or resumed work). */
    pollMs: number;
  };
  campaigns: {
    /** How often workers start due campaigns and mark finished ones SENT. */
    dispatchIntervalMs: number;
  };
  segments: {
    /** Cached counts of DYNAMIC segments older than this are recounted (periodic job, member pages). */
    countMaxAgeMs: number;
    /** Statements that evaluate a condition over all contacts are cancelled after this. */
    queryTimeoutMs: number;
    /** work_mem of those statements, so event filters hash instead of probing per contact. */
    workMemMb: number;
    /** Projects over this many contacts get a builder's live count (`POST /segments/count`) from a sample. */
    liveCountExactUpTo: number;
  };
  /** Requests per minute per project; 0 disables the limit. */
  rateLimitPerMinute: number;
  delivery: {
    concurrency: number;
    /**
     * Emails each delivery loop claims at once. Larger: fewer claim statements per message; a
     * transactional email queued behind a campaign can wait for up to one batch per loop.
     */
    claimBatch: number;
    /** Longest wait of an idle delivery loop (a NOTIFY wakes it at once); also how often dead workers' claims are looked for. */
    pollMs: number;
    attachmentLimitBytes: number;
    /** A message's own temporary failure: the first wait, doubled per attempt up to `retryMaxMs`. */
    retryBaseMs: number;
    retryMaxMs: number;
    /** A message is tried for this long from when it was queued (or requeued), then FAILED. */
    lifetimeMs: number;
    claimTimeoutSeconds: number;
    /** The transport's circuit breaker: first probe after `probeBaseMs`, doubled up to `probeMaxMs`. */
    probeBaseMs: number;
    probeMaxMs: number;
    /** The projects' owners are emailed once the transport has been down this long. */
    outageNotifyMs: number;
  };
  webhooks: {
    /** Let webhooks call private, loopback and other non-public addresses (self-hosted setups). */
    allowPrivateNetworks: boolean;
    /** Event webhook requests in flight per worker process, over all endpoints. */
    concurrency: number;
    /** In flight per endpoint (over all processes, approximately): a slow endpoint holds no more. */
    endpointConcurrency: number;
    /** Bounds one event webhook attempt (DNS, connect, redirects, answer). */
    timeoutMs: number;
    /** A claim older than this belongs to a dead worker: the delivery is due again (same webhook-id). */
    claimTimeoutSeconds: number;
    /** Idle pause of the event webhook workers (a NOTIFY wakes them sooner). */
    pollMs: number;
  };
  idempotencyTtlHours: number;
  /**
   * How often the retention job runs, and the length of a retention "day" in ms: 86,400,000 but in
   * a soak or a trial that wants to watch expiry happen within minutes (README "History and retention").
   */
  retention: { intervalMinutes: number; dayMs: number };
  track: {
    /** Lifetime of a track's Idempotency-Key (an SDK retries within seconds; track keys are many). */
    idempotencyTtlMinutes: number;
    /** Rows in one grouped track statement at most (1: every track is its own statement). */
    batchMaxRows: number;
    /** Grouped track statements in flight at once per process at most; tracks arriving meanwhile form the next. */
    batchStatements: number;
    /**
     * A second (third…) statement starts only while every statement in flight has run at least
     * this long (a stalled one: a row lock, a slow disk); otherwise one statement at a time.
     */
    batchStallMs: number;
  };
  shutdownTimeoutMs: number;
  /**
   * Worker processes `pigeon start` forks next to the API process; 0 runs the workers in the API
   * process itself.
   */
  workerProcesses: number;
  /** Prometheus metrics on their own listener; off (undefined port) by default, loopback by default. */
  metrics: { port: number | undefined; host: string };
  health: {
    /** How often a process running workers writes its heartbeat; three missed beats and it counts as dead. */
    heartbeatMs: number;
    /** `/health/ready` fails while a change-feed consumer lags more than this. */
    maxFeedLagSeconds: number;
  };
  /** `--max-old-space-size` of each worker process (0: not set). */
  workerMaxOldSpaceMb: number;
  /** V8's old-generation limit of the API process of `pigeon start` / `pigeon api` (0: V8's default). */
  apiMaxOldSpaceMb: number;
  /** V8's `--heap-growing-percent` in a process serving the API, set once it has started (0: V8's own). */
  apiHeapGrowingPercent: number;
  auth: { signupsDisabled: boolean; sessionTtlHours: number; systemMailFrom: string };
  sso: SsoConfig;
  verify: { dnsTimeoutMs: number; dnsCacheSize: number };
  /**
   * The governor per mailbox provider (modules/sending-governor): each worker process's own rate per
   * destination group (messages per second), halved by deferrals, growing back by `recoveryPerSecond`
   * each second up to `maxRate`.
   */
  governor: {
    enabled: boolean;
    maxRate: number;
    minRate: number;
    decreaseFactor: number;
    recoveryPerSecond: number;
  };
  deliverability: {
    /** The domain of the VERP return path `bounces+<token>@<bounceDomain>` (default: PUBLIC_URL's host). */
    bounceDomain: string;
    inbound: {
      port: number | undefined;
      host: string;
      maxBytes: number;
      maxClients: number;
      messagesPerMinute: number;
    };
    /** DMARC aggregate reports (RFC 7489) mailed to `address` on the inbound receiver. */
    dmarcReports: { address: string; maxBytes: number };
    health: { window: number; minSample: number; bounceThreshold: number; complaintThreshold: number };
  };
  /** SMTP submission: another way into `POST /v1/send`'s path, for clients that speak SMTP. */
  smtpSubmission: SmtpSubmissionConfig;
  /** Stripe is on only when its keys are set; the monthly caps work without it. */
  billing: { stripe: StripeConfig | undefined };
  uploads: {
    /** Per project, over every stored image. */
    quotaBytes: number;
    /** Images under `<dataDir>/uploads` unless `s3` is set. */
    localDir: string;
    s3?: S3Settings;
  };
}

export interface SmtpSubmissionConfig {
  /** The STARTTLS listener (AUTH only after STARTTLS); undefined: off. */
  port: number | undefined;
  /** The implicit-TLS listener; undefined: off. */
  tlsPort: number | undefined;
  host: string;
  /** The name in the greeting and in a generated certificate (PUBLIC_URL's host). */
  hostname: string;
  /** Certificate and key (PEM files); undefined: a self-signed pair generated into the data dir. */
  tls: { certFile: string; keyFile: string } | undefined;
  /** Where the generated pair is kept. */
  generatedTlsDir: string;
  /** AUTH without TLS, from loopback addresses only (a local relay or a test). */
  allowPlainAuth: boolean;
  /** Largest message (`552` beyond). */
  maxBytes: number;
  maxClients: number;
  /** AUTH failures per client address in 15 minutes before every AUTH from it is refused. */
  authFailuresPerIp: number;
}

export interface StripeConfig {
  secretKey: string;
  webhookSecret: string;
  /** The price a checkout subscribes the project to. */
  priceId: string;
}

/** One relay of the installation: an SMTP relay (`url`), Amazon SES (`SES_*`) or the local outbox. */
export interface RelayConfig {
  name: string;
  kind: MailTransportKind;
  /** `smtp://…` for an SMTP relay. */
  url?: string;
}

/** Relays in order, per stream: a message goes to the first whose breaker is closed. */
export type RelayRoutes = Record<RelayStream, string[]>;

/** Amazon SES (v2 API, raw MIME). Credentials: the AWS_* variables, else the AWS SDK's default chain. */
export interface SesConfig {
  region: string;
  configurationSet: string | undefined;
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined;
}

/** S3 or an S3-compatible store (MinIO, R2, …); credentials from the AWS defaults unless given. */
export interface S3Settings {
  bucket: string;
  region: string;
  endpoint?: string;
  forcePathStyle: boolean;
  prefix: string;
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

/** One sign-in provider: `oidc` and `google` speak OpenID Connect, `github` plain OAuth 2. */
export interface SsoProviderConfig {
  id: OAuthProviderId;
  name: string;
  protocol: 'oidc' | 'github';
  /** The OpenID Connect issuer (discovery at `<issuer>/.well-known/openid-configuration`). */
  issuer: string;
  clientId: string;
  clientSecret: string;
  scopes: string;
}

export interface SsoConfig {
  providers: SsoProviderConfig[];
  /** Lower-case domains a provider's verified email must belong to (subdomains excluded); empty: any. */
  allowedEmailDomains: string[];
  /** A first sign-in with no account and no pending invitation creates an account (off: refused). */
  createAccounts: boolean;
}
