import { Analytics } from './analytics.js';
import { Billing } from './billing.js';
import { Campaigns } from './campaigns.js';
import { contract } from './contract.js';
import { Suppressions } from './deliverability.js';
import { type IdempotencyOptions, withIdempotencyKey } from './idempotency.js';
import { InboundRoutes } from './inbound-routes.js';
import { type WaitForJobOptions, waitForJob } from './jobs.js';
import { paginate, paginateOffset } from './pagination.js';
import { Segments } from './segments.js';
import { SentEmails } from './sent-emails.js';
import { Topics } from './topics.js';
import { TrackingDomains } from './tracking-domains.js';
import { type RequestOptions, Transport, type TransportAuth } from './transport.js';
import type {
  ActivityItem,
  ActivityListQuery,
  ActivityPage,
  ActivityRecentCount,
  ActivityStats,
  ActivityType,
  ActivityTypeCount,
  Contact,
  ContactCreateBody,
  ContactFields,
  ContactListQuery,
  ContactPage,
  ContactUpdateBody,
  ContactWithMeta,
  DeploymentConfig,
  DmarcRange,
  Domain,
  DomainDetail,
  DomainDmarc,
  DomainWarmupSettings,
  EmailListQuery,
  Event,
  EventListQuery,
  EventNameSummary,
  EventPage,
  EventStats,
  EventStatsQuery,
  EventUsage,
  FieldUsage,
  FieldValues,
  FieldValuesQuery,
  Health,
  Job,
  JobAccepted,
  LookupResult,
  RequeueResult,
  SendBatchResult,
  SendBody,
  SenderCheck,
  SendResult,
  Template,
  TemplateCreateBody,
  TemplateListQuery,
  TemplatePage,
  TemplatePreview,
  TemplatePreviewBody,
  TemplateUpdateBody,
  TemplateUsage,
  TrackBody,
  TrackResult,
  Verification,
} from './types.js';
import { readUpload, type UploadSource } from './upload.js';
import { Uploads } from './uploads.js';
import { Webhooks } from './webhooks.js';
import { Workflows } from './workflows.js';

export interface PigeonOptions {
  /**
   * A secret key (`sk_…`, server-side only) or a public key (`pk_…`, `events.track` only). Leave it
   * out in a page served by Pigeon itself to act with the signed-in person's session instead (`session`).
   */
  apiKey?: string;
  /**
   * Act with the browser's session cookie as a member of `projectId` (what Pigeon's console does):
   * requests carry `X-Project-Id` and the cookie (same origin only), not a key. The member's role
   * decides what is allowed (a MEMBER cannot see the secret key or change keys, members or settings).
   * Usually made with `PigeonAccount.project(id)`.
   */
  session?: { projectId: string };
  /** Default `http://localhost:3000`. May include a path prefix. */
  baseUrl?: string;
  /** Default `globalThis.fetch`, looked up at call time. */
  fetch?: typeof fetch;
  /** Retries after the first attempt, default 3. */
  maxRetries?: number;
  /** Timeout of each attempt, default 30 000 ms (an attempt may run up to 5% longer, see README). */
  timeoutMs?: number;
  /** First backoff delay, doubled on each retry (with jitter); default 500 ms. */
  retryBaseDelayMs?: number;
  /** Ceiling of the backoff delay, default 8 000 ms. `Retry-After` is honoured up to 60 s. */
  retryMaxDelayMs?: number;
}

/** Options of `contacts.import`, besides the per-call ones. */
export interface ImportOptions extends RequestOptions {
  /** File name sent with the upload; default the path's or File's name, else `contacts.csv`. */
  filename?: string;
  /** Media type of the file part; default the Blob's type, else `text/csv`. */
  contentType?: string;
}

/**
 * The Pigeon API client. Each namespace method wraps one contract route:
 * `(…, options) => this.transport.call(contract.x.y, { params, query, body }, options)`.
 * Methods that send an Idempotency-Key pass `withIdempotencyKey(options)` instead of `options`,
 * so all retries of one call reuse one generated key.
 */
export class Pigeon {
  private readonly transport: Transport;

  readonly system = {
    /** Liveness and database reachability (no authentication needed). */
    health: (options?: RequestOptions): Promise<Health> => this.transport.call(contract.system.health, {}, options),
    /** The deployment's feature flags and public URLs (no authentication needed). */
    config: (options?: RequestOptions): Promise<DeploymentConfig> =>
      this.transport.call(contract.system.config, {}, options),
  };

  /** Contacts of the key's project (secret key). */
  readonly contacts = {
    /** Create a contact, or update the one with this email (upsert); `_meta.isNew` says which. */
    create: (body: ContactCreateBody, options?: RequestOptions): Promise<ContactWithMeta> =>
      this.transport.call(contract.contacts.create, { body }, options),
    /** One page of contacts; pass the returned `cursor` for the next one, or iterate with `all`. */
    list: (query: ContactListQuery = {}, options?: RequestOptions): Promise<ContactPage> =>
      this.transport.call(contract.contacts.list, { query }, options),
    /**
     * Every contact matching `query`, fetching pages lazily as the loop goes:
     * `for await (const contact of pigeon.contacts.all({ search: 'acme' })) …`
     */
    all: (query: ContactListQuery = {}, options?: RequestOptions): AsyncGenerator<Contact, void, undefined> =>
      paginate((cursor) => this.contacts.list({ ...query, cursor }, options), query.cursor),
    get: (id: string, options?: RequestOptions): Promise<Contact> =>
      this.transport.call(contract.contacts.get, { params: { id } }, options),
    update: (id: string, body: ContactUpdateBody, options?: RequestOptions): Promise<Contact> =>
      this.transport.call(contract.contacts.update, { params: { id }, body }, options),
    /** Delete a contact with its events and memberships. */
    delete: async (id: string, options?: RequestOptions): Promise<void> => {
      await this.transport.call(contract.contacts.delete, { params: { id } }, options);
    },
    /** Which of up to 500 emails exist as contacts. */
    lookup: (emails: string[], options?: RequestOptions): Promise<LookupResult> =>
      this.transport.call(contract.contacts.lookup, { body: { emails } }, options),
    /** Standard and custom fields with their inferred types and coverage. */
    fields: (options?: RequestOptions): Promise<ContactFields> =>
      this.transport.call(contract.contacts.fields, {}, options),
    /** Distinct values of a custom field (`data.<key>` or `<key>`), most common first. */
    fieldValues: (field: string, query: FieldValuesQuery = {}, options?: RequestOptions): Promise<FieldValues> =>
      this.transport.call(contract.contacts.fieldValues, { params: { field }, query }, options),
    /** Segments, campaigns, workflows and templates that reference a custom field. */
    fieldUsage: (field: string, options?: RequestOptions): Promise<FieldUsage> =>
      this.transport.call(contract.contacts.fieldUsage, { params: { field } }, options),
    /** Remove a custom field from every contact; a bulk job (`waitForJob(jobId, { kind: 'bulk' })`). */
    deleteField: (field: string, options?: RequestOptions): Promise<JobAccepted> =>
      this.transport.call(contract.contacts.deleteField, { params: { field } }, options),
    /**
     * Queue a CSV import (at most 5 MB): a Blob or File, bytes, a file path (Node), or a web or Node
     * stream (read into memory). Larger input rejects with code `PAYLOAD_TOO_LARGE` before any request.
     * Not retried on 5xx or network errors, since the server may already have queued it.
     */
    import: async (file: UploadSource, options: ImportOptions = {}): Promise<JobAccepted> => {
      const { filename, contentType, ...requestOptions } = options;
      const upload = await readUpload(file);
      const type = contentType ?? (upload.blob.type || 'text/csv');
      const blob = upload.blob.type === type ? upload.blob : new Blob([upload.blob], { type });
      const form = new FormData();
      form.append('file', blob, filename ?? upload.name ?? 'contacts.csv');
      return this.transport.call(contract.contacts.import, { body: form }, requestOptions);
    },
    importStatus: (jobId: string, options?: RequestOptions): Promise<Job> =>
      this.transport.call(contract.contacts.importStatus, { params: { jobId } }, options),
    /** Subscribe up to 1,000 contacts; a bulk job. */
    bulkSubscribe: (ids: string[], options?: RequestOptions): Promise<JobAccepted> =>
      this.transport.call(contract.contacts.bulkSubscribe, { body: { contactIds: ids } }, options),
    /** Unsubscribe up to 1,000 contacts; a bulk job. */
    bulkUnsubscribe: (ids: string[], options?: RequestOptions): Promise<JobAccepted> =>
      this.transport.call(contract.contacts.bulkUnsubscribe, { body: { contactIds: ids } }, options),
    /** Delete up to 1,000 contacts; a bulk job. */
    bulkDelete: (ids: string[], options?: RequestOptions): Promise<JobAccepted> =>
      this.transport.call(contract.contacts.bulkDelete, { body: { contactIds: ids } }, options),
    bulkStatus: (jobId: string, options?: RequestOptions): Promise<Job> =>
      this.transport.call(contract.contacts.bulkStatus, { params: { jobId } }, options),
    /**
     * Poll `importStatus` (`kind: 'import'`) or `bulkStatus` (`kind: 'bulk'`) every `intervalMs` until
     * the job is `completed` or `failed`, and resolve with it either way. Rejects with code `TIMEOUT`
     * after `timeoutMs` (default 10 minutes). `options` apply to each poll; its `signal` stops the wait.
     */
    waitForJob: (jobId: string, wait: WaitForJobOptions, options?: RequestOptions): Promise<Job> =>
      waitForJob(
        (pollOptions) =>
          wait.kind === 'import'
            ? this.contacts.importStatus(jobId, pollOptions)
            : this.contacts.bulkStatus(jobId, pollOptions),
        jobId,
        wait,
        options,
      ),
  };

  /** Tracked events: `track` takes a public or secret key; the rest need the secret key. */
  readonly events = {
    /**
     * Record an event for a contact, creating the contact when the email is unknown. Works with a
     * public key (`pk_…`) from a browser. Every call carries an Idempotency-Key (generated unless
     * given), so retries after network errors or 5xx never record the event twice.
     */
    track: async (body: TrackBody, options?: RequestOptions & IdempotencyOptions): Promise<TrackResult> =>
      (await this.transport.call(contract.events.track, { body, headers: {} }, withIdempotencyKey(options))).data,
    /** One page of events, newest first; filter by `name`, `from`, `to`. */
    list: (query: EventListQuery = {}, options?: RequestOptions): Promise<EventPage> =>
      this.transport.call(contract.events.list, { query }, options),
    /** Every event matching `query`, fetching pages lazily. */
    all: (query: EventListQuery = {}, options?: RequestOptions): AsyncGenerator<Event, void, undefined> =>
      paginate((cursor) => this.events.list({ ...query, cursor }, options), query.cursor),
    /** One page of a contact's events, newest first. */
    forContact: (
      contactId: string,
      query: { limit?: number; cursor?: string } = {},
      options?: RequestOptions,
    ): Promise<EventPage> => this.transport.call(contract.events.byContact, { params: { contactId }, query }, options),
    /** Counts per name and per day over a range (default: the last 30 days). */
    stats: (query: EventStatsQuery = {}, options?: RequestOptions): Promise<EventStats> =>
      this.transport.call(contract.events.stats, { query }, options),
    /** Distinct event names with counts and when each was last seen. */
    names: (options?: RequestOptions): Promise<EventNameSummary[]> =>
      this.transport.call(contract.events.names, {}, options),
    usage: (name: string, options?: RequestOptions): Promise<EventUsage> =>
      this.transport.call(contract.events.usage, { params: { eventName: name } }, options),
    /** Delete every event with this name; a job (`events.waitForJob`). */
    deleteByName: (name: string, options?: RequestOptions): Promise<JobAccepted> =>
      this.transport.call(contract.events.deleteByName, { params: { eventName: name } }, options),
    jobStatus: (jobId: string, options?: RequestOptions): Promise<Job> =>
      this.transport.call(contract.events.jobStatus, { params: { jobId } }, options),
    /** Poll an event deletion job until it completes or fails. */
    waitForJob: (jobId: string, wait: Omit<WaitForJobOptions, 'kind'> = {}, options?: RequestOptions): Promise<Job> =>
      waitForJob((pollOptions) => this.events.jobStatus(jobId, pollOptions), jobId, { ...wait, kind: 'bulk' }, options),
  };

  /** Sending email now or at `sendAt`, and what became of it (secret key). */
  readonly emails = {
    /** One email with its status and timeline (`GET /emails/:id`). */
    get: (id: string, options?: RequestOptions) => this.sentEmails.get(id, options),
    /** One page of emails, newest first, with filters (`GET /emails`). */
    list: (query?: EmailListQuery, options?: RequestOptions) => this.sentEmails.list(query, options),
    /** Every email matching `query`, fetching pages lazily. */
    all: (query?: EmailListQuery, options?: RequestOptions) => this.sentEmails.all(query, options),
    /** Cancel a scheduled email before it is handed to the transport (409 once it is). */
    cancel: (id: string, options?: RequestOptions) => this.sentEmails.cancel(id, options),
    /** Queue one FAILED email again (refused with 409 as sending would refuse it). */
    requeue: (id: string, options?: RequestOptions) => this.sentEmails.requeue(id, options),
    /**
     * Send an email to one or more recipients (at most 100), processed one by one: each gets its own
     * contact upsert and rendered email. Content is a `template` id, or `subject` and `body`; the
     * sender domain must be verified (else 403). MARKETING content skips unsubscribed contacts, listed
     * in `skipped`. Every call carries an Idempotency-Key (generated unless given), so retries after
     * network errors or 5xx never send twice.
     */
    send: async (body: SendBody, options?: RequestOptions & IdempotencyOptions): Promise<SendResult> =>
      (await this.transport.call(contract.emails.send, { body, headers: {} }, withIdempotencyKey(options))).data,
    /**
     * Send up to 100 different messages in one request, all or nothing: every message is checked
     * before any is stored (a refusal names `messages.<i>.<field>`). `results[i]` answers
     * `messages[i]`; one Idempotency-Key covers the batch.
     */
    sendBatch: async (messages: SendBody[], options?: RequestOptions & IdempotencyOptions): Promise<SendBatchResult> =>
      (
        await this.transport.call(
          contract.emails.sendBatch,
          { body: { messages }, headers: {} },
          withIdempotencyKey(options),
        )
      ).data,
    /**
     * Queue the project's FAILED messages again, each with a new lifetime. Suppressed addresses,
     * MARKETING mail to unsubscribed contacts and mail of cancelled campaigns are refused and stay FAILED.
     */
    requeueFailed: async (options?: RequestOptions): Promise<RequeueResult> => {
      const { data, message } = await this.transport.call(contract.emails.requeueFailed, {}, options);
      return { ...data, message };
    },
  };

  /** Email templates of the key's project. */
  readonly templates = {
    create: (body: TemplateCreateBody, options?: RequestOptions): Promise<Template> =>
      this.transport.call(contract.templates.create, { body }, options),
    /** One page of templates (`page` from 1, `pageSize` up to 100); filter by `type`, `search`; `sort`, `dir`. */
    list: (query: TemplateListQuery = {}, options?: RequestOptions): Promise<TemplatePage> =>
      this.transport.call(contract.templates.list, { query }, options),
    /**
     * Every template matching `query`, fetching pages lazily from `query.page` (default 1) until
     * `totalPages`: `for await (const template of pigeon.templates.all({ type: 'MARKETING' })) …`
     */
    all: (query: TemplateListQuery = {}, options?: RequestOptions): AsyncGenerator<Template, void, undefined> =>
      paginateOffset((page) => this.templates.list({ ...query, page }, options), query.page),
    get: (id: string, options?: RequestOptions): Promise<Template> =>
      this.transport.call(contract.templates.get, { params: { id } }, options),
    update: (id: string, body: TemplateUpdateBody, options?: RequestOptions): Promise<Template> =>
      this.transport.call(contract.templates.update, { params: { id }, body }, options),
    /** Delete a template (409 `CONFLICT` while campaigns or workflow steps use it; see `usage`). */
    delete: async (id: string, options?: RequestOptions): Promise<void> => {
      await this.transport.call(contract.templates.delete, { params: { id } }, options);
    },
    /** Copy a template; resolves with the new template (its `id` is the new id). */
    duplicate: (id: string, options?: RequestOptions): Promise<Template> =>
      this.transport.call(contract.templates.duplicate, { params: { id } }, options),
    /**
     * Render content for a contact (`contactId`; without it, a sample contact without data) through
     * the delivery renderer: subject, HTML, text and `/v1/send`'s missing-variable warnings. Nothing is stored or sent.
     */
    preview: (body: TemplatePreviewBody, options?: RequestOptions): Promise<TemplatePreview> =>
      this.transport.call(contract.templates.preview, { body }, options),
    /** Campaigns and workflow steps that use the template. */
    usage: (id: string, options?: RequestOptions): Promise<TemplateUsage> =>
      this.transport.call(contract.templates.usage, { params: { id } }, options),
  };

  /** The project's activity: sends, deliveries, opens, clicks, bounces, subscription changes, tracked events. */
  readonly activity = {
    /** One page, newest first; filter by `contactId`, `types`, `from`, `to`. */
    list: ({ types, ...query }: ActivityListQuery = {}, options?: RequestOptions): Promise<ActivityPage> =>
      this.transport.call(contract.activity.list, { query: { ...query, types: types?.join(',') } }, options),
    /** Every activity matching `query`, fetching pages lazily. */
    all: (query: ActivityListQuery = {}, options?: RequestOptions): AsyncGenerator<ActivityItem, void, undefined> =>
      paginate((cursor) => this.activity.list({ ...query, cursor }, options), query.cursor),
    /** Totals per type and per day over a range (default: the last 30 days). */
    stats: (query: { from?: string; to?: string } = {}, options?: RequestOptions): Promise<ActivityStats> =>
      this.transport.call(contract.activity.stats, { query }, options),
    /** Every type with its meaning and count over a range (default: the last 30 days). */
    types: (query: { from?: string; to?: string } = {}, options?: RequestOptions): Promise<ActivityTypeCount[]> =>
      this.transport.call(contract.activity.types, { query }, options),
    /** How many activities (of `types`, default all) happened in the last `minutes` (default 60). */
    recentCount: (
      { types, minutes }: { minutes?: number; types?: ActivityType[] } = {},
      options?: RequestOptions,
    ): Promise<ActivityRecentCount> =>
      this.transport.call(contract.activity.recentCount, { query: { minutes, types: types?.join(',') } }, options),
  };

  /** Sender domains: publish their DNS records, then `verify` (secret key). */
  readonly domains = {
    /** Add a sender domain; the result's `records` are the DNS records to publish (DKIM required). */
    create: (domain: string, options?: RequestOptions): Promise<Domain> =>
      this.transport.call(contract.domains.create, { body: { domain } }, options),
    /** The project's domains, verified and pending. */
    list: (projectId: string, options?: RequestOptions): Promise<Domain[]> =>
      this.transport.call(contract.domains.list, { params: { projectId } }, options),
    /** One domain, with its warm-up state (`warmup`: cap today, sent today, next reset). */
    get: (id: string, options?: RequestOptions): Promise<DomainDetail> =>
      this.transport.call(contract.domains.get, { params: { id } }, options),
    /**
     * Warm a domain up: campaign and workflow mail over the day's cap (from `startCap` on the first
     * day to `targetCap` on day `days`) waits for the next day (UTC); transactional mail is counted, never held.
     */
    setWarmup: (id: string, settings: DomainWarmupSettings, options?: RequestOptions): Promise<DomainDetail> =>
      this.transport.call(contract.domains.setWarmup, { params: { id }, body: settings }, options),
    /**
     * The domain's DMARC aggregate reports (mailed by receivers to Pigeon's `reportAddress`) over a
     * range, default the last 30 days: totals, each source IP, each UTC day.
     */
    dmarc: (id: string, range: DmarcRange = {}, options?: RequestOptions): Promise<DomainDmarc> =>
      this.transport.call(contract.dmarcReports.get, { params: { id }, query: range }, options),
    /** Check the domain's DNS records now; resolves with the domain and each record's `status`. */
    verify: (id: string, options?: RequestOptions): Promise<Domain> =>
      this.transport.call(contract.domains.verify, { params: { id } }, options),
    /** Remove a domain (409 `CONFLICT` while a template sends from it). */
    delete: async (id: string, options?: RequestOptions): Promise<void> => {
      await this.transport.call(contract.domains.delete, { params: { id } }, options);
    },
    /**
     * The sender check: SPF, DKIM, DMARC policy and alignment, the return path's MX, one-click
     * unsubscribe, complaint and bounce rates, TLS to the relay; each `pass`, `warn` or `fail` with its `fix`.
     */
    check: (id: string, options?: RequestOptions): Promise<SenderCheck> =>
      this.transport.call(contract.senderCheck.check, { params: { id } }, options),
  };

  /** Tracking domains: the host of open and click links in a sender domain's mail (a CNAME to Pigeon). */
  readonly trackingDomains: TrackingDomains;

  /**
   * Check an address before sending to it (secret key): format, MX and A/AAAA records, disposable,
   * alias and free-provider domains, typos (`suggestedEmail`), plus addressing and random input.
   * `valid` is false only when the domain does not exist or cannot receive mail.
   */
  readonly verify = async (email: string, options?: RequestOptions): Promise<Verification> =>
    (await this.transport.call(contract.verify.verify, { body: { email } }, options)).data;

  /** Addresses no longer sent to after a hard bounce or a complaint; list them and lift them (secret key). */
  readonly suppressions: Suppressions;
  /** Email metrics over time, top campaigns and top events (secret key). */
  readonly analytics: Analytics;

  /** Images for template bodies, served from Pigeon's public URL (secret key). */
  readonly uploads: Uploads;

  /** Segments: DYNAMIC (a condition tree) or STATIC (members by email), with their members (secret key). */
  readonly segments: Segments;

  /** Campaigns: one email to every contact, a segment or a condition, sent now or scheduled (secret key). */
  readonly campaigns: Campaigns;

  /**
   * Workflows: an event starts an execution per contact that walks a graph of steps (send an email,
   * wait, branch on a condition, call a webhook, update the contact), with their `steps`,
   * `transitions` and `executions` (secret key).
   */
  readonly workflows: Workflows;

  /**
   * Monthly caps per category and consumption; Stripe checkout, portal and invoices when the server
   * has billing on (secret key of the project whose id is passed).
   */
  readonly billing: Billing;

  /**
   * Event webhooks: `verify` an incoming request (Standard Webhooks signature), manage `endpoints`,
   * inspect and replay `deliveries` (secret key).
   */
  readonly webhooks: Webhooks;
  /** Inbound mail routes and the messages they took (README "Receiving mail"). */
  readonly inboundRoutes: InboundRoutes;
  /** Topics a contact subscribes to or leaves on the preference page, and each contact's choices (secret key). */
  readonly topics: Topics;

  private readonly sentEmails: SentEmails;

  constructor(options: PigeonOptions) {
    if (!options?.apiKey && !options?.session?.projectId) {
      throw new TypeError('Pigeon: `apiKey` is required (or `session: { projectId }` in a page served by Pigeon)');
    }
    const auth = options.apiKey ? { apiKey: options.apiKey } : { session: { projectId: options.session?.projectId } };
    this.transport = transportOf(options, auth);
    this.suppressions = new Suppressions(this.transport);
    this.analytics = new Analytics(this.transport);
    this.uploads = new Uploads(this.transport);
    this.segments = new Segments(this.transport);
    this.campaigns = new Campaigns(this.transport);
    this.workflows = new Workflows(this.transport);
    this.billing = new Billing(this.transport);
    this.webhooks = new Webhooks(this.transport);
    this.inboundRoutes = new InboundRoutes(this.transport);
    this.trackingDomains = new TrackingDomains(this.transport);
    this.topics = new Topics(this.transport);
    this.sentEmails = new SentEmails(this.transport);
  }
}

/** The transport every client of these options uses (defaults applied once, here). */
export function transportOf(options: Omit<PigeonOptions, 'apiKey' | 'session'>, auth: TransportAuth): Transport {
  return new Transport({
    auth,
    baseUrl: (options.baseUrl ?? 'http://localhost:3000').replace(/\/+$/, ''),
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    maxRetries: options.maxRetries ?? 3,
    timeoutMs: options.timeoutMs ?? 30_000,
    retryBaseDelayMs: options.retryBaseDelayMs ?? 500,
    retryMaxDelayMs: options.retryMaxDelayMs ?? 8_000,
  });
}

/** What a public key (`pk_…`) may call: tracking only. Every other endpoint needs the secret key. */
export interface PublicPigeon {
  readonly events: Pick<Pigeon['events'], 'track'>;
}

/**
 * Makes a client typed for its key: a `pk_…` key gives a {@link PublicPigeon} (only
 * `events.track`, safe for browser code), any other key the full {@link Pigeon}.
 */
export function createPigeon(options: PigeonOptions & { apiKey: `pk_${string}` }): PublicPigeon;
export function createPigeon(options: PigeonOptions): Pigeon;
export function createPigeon(options: PigeonOptions): Pigeon | PublicPigeon {
  const client = new Pigeon(options);
  return options.apiKey?.startsWith('pk_') ? { events: { track: client.events.track } } : client;
}
