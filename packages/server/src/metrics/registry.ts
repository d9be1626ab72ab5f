import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Every metric Pigeon exports, defined here and nowhere else (DESIGN.md §9: `pigeon_` prefix, base
 * units, `_total` counters, label values from small fixed sets — never a project id, an address or
 * an event name). Two registries:
 *
 * - `processMetrics`: what each process counts itself (requests, delivery outcomes, jobs, its pool,
 *   Node's runtime), labelled with the process (`api`, `worker-1`…) so the workers' series, collected
 *   by the parent over IPC, stay apart;
 * - `databaseMetrics`: facts read from the database at scrape time (queue, feed lag, executions,
 *   jobs due), the same whichever process reads them, so only the process serving METRICS_PORT reads
 *   them, and they carry no process label.
 */
export const processMetrics = new Registry();
export const databaseMetrics = new Registry();

const inProcess = [processMetrics];
const fromDatabase = [databaseMetrics];

// ---- HTTP (API process)

export const httpRequestDuration = new Histogram({
  name: 'pigeon_http_request_duration_seconds',
  help: 'HTTP requests by method, route template (`/contacts/:id`, `unmatched` for 404s) and status class (2xx…5xx)',
  labelNames: ['method', 'route', 'status_class'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: inProcess,
});

export const httpRateLimited = new Counter({
  name: 'pigeon_http_rate_limited_total',
  help: 'Requests refused by the per-project rate limit (429)',
  registers: inProcess,
});

// ---- SMTP submission (API process)

export const smtpSubmissions = new Counter({
  name: 'pigeon_smtp_submission_messages_total',
  help: 'Messages submitted over SMTP by outcome: accepted (queued), repeated (a Message-ID already accepted: nothing queued), refused (a reply about the message, its sender or its project), failed (451: a fault on our side)',
  labelNames: ['outcome'] as const,
  registers: inProcess,
});

export const smtpSubmissionAuthFailures = new Counter({
  name: 'pigeon_smtp_submission_auth_failures_total',
  help: 'SMTP AUTH refused: credentials (not a secret key of a project), throttled (the address is past SMTP_SUBMISSION_AUTH_FAILURES)',
  labelNames: ['reason'] as const,
  registers: inProcess,
});

export const trackGroupRows = new Histogram({
  name: 'pigeon_track_group_rows',
  help: 'Track calls written together in one grouped statement (POST /v1/track)',
  buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
  registers: inProcess,
});

// ---- Background loops (worker processes: delivery, workflows, change-feed, event-webhooks, campaigns)

export const loopClaims = new Counter({
  name: 'pigeon_loop_claims_total',
  help: 'Claims of each background loop by outcome: work (something was taken), empty (nothing was due)',
  labelNames: ['loop', 'outcome'] as const,
  registers: inProcess,
});

export const loopWakeups = new Counter({
  name: 'pigeon_loop_wakeups_total',
  help: 'Wake-ups of each background loop by cause: notify (a NOTIFY on its channels), local (a wake from this process), timer (a wait that ran out: the idle poll, or the time the next work of the loop is due)',
  labelNames: ['loop', 'cause'] as const,
  registers: inProcess,
});

export const loopErrors = new Counter({
  name: 'pigeon_loop_errors_total',
  help: 'Errors a background loop caught (the loop pauses, then claims again)',
  labelNames: ['loop'] as const,
  registers: inProcess,
});

// ---- Delivery (worker processes)

/** What became of one delivery attempt. */
export const DELIVERY_RESULTS = ['sent', 'deferred', 'bounced', 'failed', 'suppressed', 'cancelled'] as const;
export type DeliveryResult = (typeof DELIVERY_RESULTS)[number];

export const deliveryOutcomes = new Counter({
  name: 'pigeon_delivery_outcomes_total',
  help: 'Delivery attempts by result: sent, deferred (retried later), bounced (5xx), failed (out of attempts), suppressed, cancelled',
  labelNames: ['result'] as const,
  registers: inProcess,
});

export const deliveryFeedback = new Counter({
  name: 'pigeon_delivery_feedback_total',
  help: 'Bounces and complaints recorded (SMTP 5xx, DSNs, ARF reports, SES notifications): bounce (hard), soft_bounce, complaint',
  labelNames: ['kind'] as const,
  registers: inProcess,
});

/** What became of a DMARC aggregate report mailed to the inbound receiver. */
export const DMARC_REPORT_OUTCOMES = ['stored', 'duplicate', 'unknown_domain', 'refused'] as const;

export const dmarcReports = new Counter({
  name: 'pigeon_dmarc_reports_total',
  help: 'DMARC aggregate reports received: stored, duplicate (a resend, counted once), unknown_domain (about no verified domain: dropped), refused (malformed or over DMARC_REPORT_MAX_BYTES)',
  labelNames: ['outcome'] as const,
  registers: inProcess,
});

export const transportDuration = new Histogram({
  name: 'pigeon_delivery_transport_duration_seconds',
  help: 'Time the mail transport (SMTP relay, SES, outbox) took to answer one message it accepted, by transport kind and relay (its name in RELAYS; with one relay, its kind)',
  labelNames: ['transport', 'relay'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: inProcess,
});

export const deliveryReclaimed = new Counter({
  name: 'pigeon_delivery_reclaimed_total',
  help: 'Claimed emails put back in the queue because the worker holding them died (claim timeout)',
  registers: inProcess,
});

/** Destination groups of the governor per mailbox provider (by the recipient domain's MX hosts). */
export const MAILBOX_GROUPS = ['gmail', 'microsoft', 'yahoo', 'apple', 'other'] as const;
export type MailboxGroup = (typeof MAILBOX_GROUPS)[number];

export const governorRate = new Gauge({
  name: 'pigeon_governor_rate',
  help: "The governor's sending rate per destination group (messages per second this process allows; deferrals lower it)",
  labelNames: ['group'] as const,
  registers: inProcess,
});

export const governorDeferrals = new Counter({
  name: 'pigeon_governor_deferrals_total',
  help: 'Deferrals (4xx replies about a message) per destination group, each lowering its rate',
  labelNames: ['group'] as const,
  registers: inProcess,
});

export const governorHeld = new Counter({
  name: 'pigeon_governor_held_total',
  help: 'Messages put back in the queue untried (no attempt used) by reason: rate (its destination group is slowed), warmup (the sender domain reached its cap today); by destination group',
  labelNames: ['reason', 'group'] as const,
  registers: inProcess,
});

export const webhookDeliveries = new Counter({
  name: 'pigeon_webhook_deliveries_total',
  help: 'Workflow WEBHOOK calls by outcome: success, retryable, failed',
  labelNames: ['outcome'] as const,
  registers: inProcess,
});

export const jobFailures = new Counter({
  name: 'pigeon_job_failures_total',
  help: 'Background (Agenda) job runs that failed, by job name (a fixed set defined in the code)',
  labelNames: ['job'] as const,
  registers: inProcess,
});

// ---- Processes (the API process of `pigeon start`)

export const workerProcesses = new Gauge({
  name: 'pigeon_worker_processes',
  help: 'Worker processes of `pigeon start` running now (supervised by the API process)',
  registers: inProcess,
});

export const workerRestarts = new Counter({
  name: 'pigeon_worker_restarts_total',
  help: 'Worker processes of `pigeon start` that exited unexpectedly and were restarted',
  registers: inProcess,
});

export const workerScrapeFailures = new Counter({
  name: 'pigeon_metrics_worker_scrape_failures_total',
  help: 'Scrapes in which a worker process did not send its metrics in time (its series are missing from that scrape)',
  registers: inProcess,
});

// ---- PostgreSQL pool (each process has its own)

export const poolClients = new Gauge({
  name: 'pigeon_db_pool_clients',
  help: "This process's PostgreSQL pool: connections in use, idle, and requests waiting for one",
  labelNames: ['state'] as const,
  registers: inProcess,
});

// ---- Read from the database at scrape time (see ./database.ts)

export const emailsQueued = new Gauge({
  name: 'pigeon_emails_queued',
  help: 'Emails waiting for delivery (QUEUED, due or not) by priority: transactional, workflow, campaign',
  labelNames: ['priority'] as const,
  registers: fromDatabase,
});

export const emailsQueuedOldestAge = new Gauge({
  name: 'pigeon_emails_queued_oldest_age_seconds',
  help: 'How long the longest-waiting due email of each priority has been due (0: none due)',
  labelNames: ['priority'] as const,
  registers: fromDatabase,
});

export const emailsSending = new Gauge({
  name: 'pigeon_emails_sending',
  help: 'Emails claimed by a worker and being sent now',
  registers: fromDatabase,
});

export const campaignRecipientsPending = new Gauge({
  name: 'pigeon_campaign_recipients_pending',
  help: 'Campaign mail not yet sent: campaign-priority emails queued or being sent',
  registers: fromDatabase,
});

export const changeFeedLag = new Gauge({
  name: 'pigeon_change_feed_lag_seconds',
  help: 'Age of the oldest contact change each feed consumer has not read yet (0: caught up); grows while any transaction that wrote, in any database of the PostgreSQL server, is older than that change',
  labelNames: ['consumer'] as const,
  registers: fromDatabase,
});

export const workflowExecutions = new Gauge({
  name: 'pigeon_workflow_executions',
  help: 'Workflow executions not finished, by state: running, waiting',
  labelNames: ['state'] as const,
  registers: fromDatabase,
});

export const workflowTimersOverdue = new Gauge({
  name: 'pigeon_workflow_timers_overdue',
  help: 'Workflow executions whose timer (DELAY, WAIT_FOR_EVENT timeout) fell due more than a minute ago',
  registers: fromDatabase,
});

export const jobsDue = new Gauge({
  name: 'pigeon_jobs_due',
  help: 'Background (Agenda) jobs due and not running, by job name',
  labelNames: ['job'] as const,
  registers: fromDatabase,
});

export const jobsRunning = new Gauge({
  name: 'pigeon_jobs_running',
  help: 'Background (Agenda) jobs running now (locked by a worker), by job name',
  labelNames: ['job'] as const,
  registers: fromDatabase,
});

export const workersAlive = new Gauge({
  name: 'pigeon_workers_alive',
  help: 'Processes running workers whose heartbeat in the database is fresh (every host, every process)',
  registers: fromDatabase,
});

export const relayUp = new Gauge({
  name: 'pigeon_relay_up',
  help: "Each relay's circuit breaker as the workers last recorded it (transport_status): 1 up, 0 down (delivery through it paused and probed; its routes' mail goes to the next relay)",
  labelNames: ['relay'] as const,
  registers: fromDatabase,
});

export const lastDeliveryError = new Gauge({
  name: 'pigeon_delivery_last_error_timestamp_seconds',
  help: 'When a worker last recorded a delivery error (Unix time; 0: none since the workers started)',
  registers: fromDatabase,
});

let defaultsOn = false;

/** Node's runtime metrics (event-loop lag, heap, GC, CPU) for this process, and its `process` label. */
export function labelThisProcess(name: string): void {
  processMetrics.setDefaultLabels({ process: name });
  if (defaultsOn) return;
  defaultsOn = true;
  collectDefaultMetrics({ register: processMetrics, prefix: 'pigeon_' });
}

// ---- Worked out at scrape time by the process serving METRICS_PORT (./server.ts)

export const scrapeMetrics = new Registry();

export const databaseUp = new Gauge({
  name: 'pigeon_database_up',
  help: "1 when this scrape read the database's numbers, 0 when the database did not answer",
  registers: [scrapeMetrics],
});

export const ready = new Gauge({
  name: 'pigeon_ready',
  help: '1 when GET /health/ready would answer 200; 0 otherwise (see pigeon_not_ready)',
  registers: [scrapeMetrics],
});

export const notReady = new Gauge({
  name: 'pigeon_not_ready',
  help: 'Why readiness fails: 1 per failing check (database, migrations, workers, change_feed)',
  labelNames: ['check'] as const,
  registers: [scrapeMetrics],
});

// ---- Only with DATABASE_REPLICA_URL (the API process's read replica, db/replica.ts)

export const replicaMetrics = new Registry();

export const replicaLag = new Gauge({
  name: 'pigeon_db_replica_lag_seconds',
  help: "Exported only with DATABASE_REPLICA_URL: how far the read replica's replay trails the primary's commits, last sampled (NaN: it did not answer)",
  registers: [replicaMetrics],
});

export const replicaInUse = new Gauge({
  name: 'pigeon_db_replica_in_use',
  help: 'Exported only with DATABASE_REPLICA_URL: 1 while reads that may trail the primary go to the replica, 0 while they go to the primary (it lags beyond DATABASE_REPLICA_MAX_LAG_SECONDS or does not answer)',
  registers: [replicaMetrics],
});

/** Every registry, for the README's metric list. */
export const allRegistries = [processMetrics, databaseMetrics, scrapeMetrics, replicaMetrics];

/**
 * Counters with a fixed set of label values start at 0 for each, so every series exists from the
 * first scrape (a rate over a series that appears only at its first event misses that event).
 */
for (const result of DELIVERY_RESULTS) deliveryOutcomes.inc({ result }, 0);
for (const outcome of ['success', 'retryable', 'failed'] as const) webhookDeliveries.inc({ outcome }, 0);
for (const kind of ['bounce', 'soft_bounce', 'complaint'] as const) deliveryFeedback.inc({ kind }, 0);
for (const outcome of DMARC_REPORT_OUTCOMES) dmarcReports.inc({ outcome }, 0);

/** The same for the jobs this process defines. */
export function zeroJobFailures(names: string[]): void {
  for (const job of names) jobFailures.inc({ job }, 0);
}
