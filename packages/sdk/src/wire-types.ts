import type { z } from 'zod';
import type * as wire from './contract.js';
import type { RouteInput, SuccessBody } from './transport.js';

// Wire types, all derived from the contract: the input of scripts/generate-types.mjs, which writes
// each exported alias's resolved type into src/types.ts (what the SDK's code and declarations use).
// Declared as aliases (not re-exported) because the contract names are both a zod schema and a type.
// Only types here; non-exported helpers (like `Contract`) stay out of the generated file.
type Contract = wire.Contract;
export type ErrorEnvelope = wire.ErrorEnvelope;
/** Every `error.code` the server answers with (the contract's enum). */
export type ErrorCode = wire.ErrorCode;
export type FieldError = wire.FieldError;
export type Health = z.infer<typeof wire.Health>;
export type DeploymentConfig = z.infer<typeof wire.DeploymentConfig>;

type ContactRoutes = wire.Contract['contacts'];

// Contacts: responses
export type Contact = z.infer<typeof wire.Contact>;
/** A created or updated contact; `_meta` says which. */
export type ContactWithMeta = z.infer<typeof wire.ContactWithMeta>;
/** One page of `contacts.list`: follow `cursor` while `hasMore`. `total` is real only on the first page. */
export type ContactPage = SuccessBody<ContactRoutes['list']>;
/** An import or bulk job, as `contacts.importStatus` and `contacts.bulkStatus` return it. */
export type Job = z.infer<typeof wire.Job>;
export type JobStatus = z.infer<typeof wire.JobStatus>;
export type JobKind = z.infer<typeof wire.JobKind>;
/** The 202 answer of a queued job: poll it with `contacts.waitForJob`. */
export type JobAccepted = z.infer<typeof wire.JobAccepted>;
export type FieldInfo = z.infer<typeof wire.FieldInfo>;
export type ContactFields = SuccessBody<ContactRoutes['fields']>;
export type FieldValues = SuccessBody<ContactRoutes['fieldValues']>;
export type FieldUsage = SuccessBody<ContactRoutes['fieldUsage']>;
export type LookupResult = SuccessBody<ContactRoutes['lookup']>;

// Contacts: inputs (the request side of the contract, so optional fields with defaults stay optional)
export type ContactCreateBody = RouteInput<ContactRoutes['create']>['body'];
export type ContactUpdateBody = RouteInput<ContactRoutes['update']>['body'];
export type ContactListQuery = RouteInput<ContactRoutes['list']>['query'];
export type FieldValuesQuery = RouteInput<ContactRoutes['fieldValues']>['query'];

type EventRoutes = Contract['events'];
export type TrackBody = RouteInput<EventRoutes['track']>['body'];
export type TrackResult = z.infer<typeof wire.TrackResult>;
export type Event = z.infer<typeof wire.Event>;
export type EventPage = SuccessBody<EventRoutes['list']>;
export type EventListQuery = RouteInput<EventRoutes['list']>['query'];
export type EventStats = SuccessBody<EventRoutes['stats']>;
export type EventStatsQuery = RouteInput<EventRoutes['stats']>['query'];
export type EventNameSummary = SuccessBody<EventRoutes['names']>[number];
export type EventUsage = SuccessBody<EventRoutes['usage']>;

// Sending: POST /v1/send
type EmailRoutes = Contract['emails'];
/** What `emails.send` takes: recipients (processed one by one), and a template or subject and body. */
export type SendBody = RouteInput<EmailRoutes['send']>['body'];
/** The sent emails, plus the unsubscribed recipients a MARKETING send skipped. */
export type SendResult = z.infer<typeof wire.SendResult>;
/** The answer of `emails.sendBatch`: one `SendResult` per message, in order. */
export type SendBatchResult = z.infer<typeof wire.SendBatchResult>;
/** A warning in a send's answer (empty variable, unknown or ignored field, skipped recipient). */
export type SendWarning = z.infer<typeof wire.SendWarning>;

// Templates
type TemplateRoutes = Contract['templates'];
export type Template = z.infer<typeof wire.Template>;
export type TemplateCreateBody = RouteInput<TemplateRoutes['create']>['body'];
export type TemplateUpdateBody = RouteInput<TemplateRoutes['update']>['body'];
export type TemplateListQuery = RouteInput<TemplateRoutes['list']>['query'];
/** One page of `templates.list`: `page` counts from 1 up to `totalPages`. */
export type TemplatePage = SuccessBody<TemplateRoutes['list']>;
/** Campaigns and workflow steps that use a template. */
export type TemplateUsage = SuccessBody<TemplateRoutes['usage']>;
/** What `templates.preview` renders: content, the format it is written in, and whose data fills it. */
export type TemplatePreviewBody = RouteInput<TemplateRoutes['preview']>['body'];
/** Content rendered for one contact as delivery would, with the missing-variable warnings of `/v1/send`. */
export type TemplatePreview = SuccessBody<TemplateRoutes['preview']>;

// Activity: the merged feed of email and contact events
type ActivityRoutes = Contract['activity'];
export type ActivityType = z.infer<typeof wire.ActivityType>;
export type ActivityItem = z.infer<typeof wire.ActivityItem>;
/** One page of `activity.list`: follow `cursor` while `hasMore`. */
export type ActivityPage = SuccessBody<ActivityRoutes['list']>;
/** Filters of `activity.list`; `types` as a list instead of the wire's comma-separated string. */
export type ActivityListQuery = Omit<RouteInput<ActivityRoutes['list']>['query'], 'types'> & {
  types?: ActivityType[];
};
export type ActivityTypeCount = SuccessBody<ActivityRoutes['types']>[number];
export type ActivityRecentCount = SuccessBody<ActivityRoutes['recentCount']>;
export type ActivityStats = SuccessBody<ActivityRoutes['stats']>;

// Sender domains
export type Domain = z.infer<typeof wire.Domain>;
/** A domain as `GET /domains/:id` answers it: with its warm-up state. */
export type DomainDetail = z.infer<typeof wire.DomainDetail>;
/** A sender domain's warm-up today: cap, count, the day of the ramp and when the day resets. */
export type DomainWarmup = z.infer<typeof wire.DomainWarmup>;
/** What `domains.setWarmup` takes: on or off, the first and last day's caps and the days of the ramp. */
export type DomainWarmupSettings = z.infer<typeof wire.DomainWarmupSettings>;
/** A DNS record to publish for a domain, with its last checked status. */
export type DnsRecord = z.infer<typeof wire.DnsRecord>;
/** `GET /domains/:id/dmarc`: a domain's DMARC aggregate reports over a range, by source IP and by day. */
export type DomainDmarc = z.infer<typeof wire.DomainDmarc>;
/** One source IP of `DomainDmarc.sources`: its messages, aligned passes and failures, dispositions and reporters. */
export type DmarcSource = z.infer<typeof wire.DmarcSource>;
/** The last 7 days of a domain's DMARC reports on `GET /domains/:id` (`warning` when sources fail alignment). */
export type DmarcAlignment = z.infer<typeof wire.DmarcAlignment>;
/** The range of `domains.dmarc`. */
export interface DmarcRange {
  /** ISO 8601, widened to its UTC day; default `to` minus 30 days. */
  from?: string;
  /** ISO 8601, exclusive; default now. */
  to?: string;
}

// Tracking domains and the sender check
/** A tracking domain: the host of the open pixel and click links in a sender domain's mail. */
export type TrackingDomain = z.infer<typeof wire.TrackingDomain>;
/** `domains.check`: each rule of the sender check, pass, warn or fail, with the fix. */
export type SenderCheck = z.infer<typeof wire.SenderCheck>;
export type SenderCheckRule = z.infer<typeof wire.SenderCheckRule>;
export type SenderCheckStatus = z.infer<typeof wire.SenderCheckStatus>;
export type SenderCheckRuleId = z.infer<typeof wire.SenderCheckRuleId>;

// Segments and their condition trees
type SegmentRoutes = Contract['segments'];
export type SegmentType = z.infer<typeof wire.SegmentType>;
/** A segment: DYNAMIC (members match `condition`) or STATIC (members added by email). */
export type Segment = z.infer<typeof wire.Segment>;
export type ConditionOperator = wire.ConditionOperator;
/** Unit of the amount in a time operator (`within`, `olderThan`, `triggeredWithin`, …). */
export type ConditionUnit = wire.ConditionUnit;
/** One test on a contact: `{ field, operator, value?, unit? }`. */
export type ConditionFilter = wire.ConditionFilter;
/** Filters ANDed together and with the nested `conditions`, as the server returns them. */
export type ConditionGroup = wire.ConditionGroup;
/** `{ logic, groups }` as the server returns it (`Segment.condition`). */
export type ConditionTree = wire.ConditionTree;
/** A group as requests may send it: `filters` defaults to `[]` (but a group needs filters or `conditions`). */
export type ConditionGroupInput = wire.ConditionTreeInput['groups'][number];
/** A condition tree as requests may send it: `logic` defaults to `AND`. Any `ConditionTree` is one. */
export type ConditionTreeInput = wire.ConditionTreeInput;
/** What `segments.create` takes; `condition` is required for DYNAMIC (the default) and refused for STATIC. */
export type SegmentCreateBody = Omit<RouteInput<SegmentRoutes['create']>['body'], 'condition'> & {
  condition?: ConditionTreeInput | null;
};
/** What `segments.update` takes; `condition` applies to DYNAMIC segments only. */
export type SegmentUpdateBody = Omit<RouteInput<SegmentRoutes['update']>['body'], 'condition'> & {
  condition?: ConditionTreeInput;
};
/** Campaigns, workflows and other segments that reference a segment. */
export type SegmentUsage = SuccessBody<SegmentRoutes['usage']>;
/** How many contacts a condition matches now (counted on a sample in large projects: `sampled`). */
export type ConditionCount = SuccessBody<SegmentRoutes['count']>;
/** `page` (from 1) and `pageSize` (default 20, at most 100) of `segments.contacts`. */
export type SegmentContactsQuery = RouteInput<SegmentRoutes['contacts']>['query'];
/** One page of a segment's members: `{ data, page, pageSize, total }`. */
export type SegmentContactPage = SuccessBody<SegmentRoutes['contacts']>;
/** One email's outcome in `segments.addMembers` / `segments.removeMembers`. */
export type MemberResult = z.infer<typeof wire.MemberResult>;
export type MemberStatus = MemberResult['status'];
/** The answer of `segments.addMembers` / `segments.removeMembers`: one result per distinct email. */
export type MembersChange = z.infer<typeof wire.MembersChange>;
/** The answer of `segments.compute`: how many contacts entered and exited. */
export type SegmentComputeResult = z.infer<typeof wire.SegmentComputeResult>;

// Campaigns
type CampaignRoutes = Contract['campaigns'];
export type CampaignStatus = z.infer<typeof wire.CampaignStatus>;
/** Who a campaign goes to: every contact, a segment's members, or the contacts matching `audienceCondition`. */
export type AudienceType = z.infer<typeof wire.AudienceType>;
/** A campaign with its delivery and engagement counters. */
export type Campaign = z.infer<typeof wire.Campaign>;
/**
 * What `campaigns.create` and `campaigns.replace` take: `segmentId` is required for a SEGMENT
 * audience, `audienceCondition` for a FILTERED one; `type` defaults to MARKETING.
 */
export type CampaignInput = Omit<RouteInput<CampaignRoutes['create']>['body'], 'audienceCondition'> & {
  audienceCondition?: ConditionTreeInput | null;
};
/**
 * Filters of `campaigns.list`: `page` (from 1), `pageSize` (default 20, at most 100), `status`,
 * `search` (name, subject and sender address), `sort` (default `createdAt`) and `dir` (default `desc`).
 */
export type CampaignListQuery = Omit<RouteInput<CampaignRoutes['list']>['query'], 'status' | 'sort' | 'dir'> & {
  status?: CampaignStatus;
  sort?: 'name' | 'createdAt' | 'updatedAt';
  dir?: 'asc' | 'desc';
};
/** One page of `campaigns.list`: `page` counts from 1 up to `totalPages`. */
export type CampaignPage = SuccessBody<CampaignRoutes['list']>;
/** Delivery and engagement counts of a campaign; `rates` are fractions 0..1 of `sent`. */
export type CampaignStats = SuccessBody<CampaignRoutes['stats']>;
/** The answer of `campaigns.test`: the queued email's id and the address it goes to. */
export type CampaignTestResult = SuccessBody<CampaignRoutes['test']>['data'];
/** How many contacts a campaign's audience reaches if sent now. */
export type AudienceCount = SuccessBody<CampaignRoutes['audienceCount']>;
/** What `campaigns.audienceCount` takes: a campaign's type and audience fields. */
export type AudienceCountBody = Omit<RouteInput<CampaignRoutes['audienceCount']>['body'], 'audienceCondition'> & {
  audienceCondition?: ConditionTreeInput | null;
};
/** `{ success, data, message }`, the 200 body of `campaigns.send`. */
type CampaignSendResponse = SuccessBody<CampaignRoutes['send']>;
/** The answer of `campaigns.send`: the campaign's new `status` and `scheduledFor`, and the server's message. */
export type CampaignSendResult = CampaignSendResponse['data'] & Pick<CampaignSendResponse, 'message'>;
/** `{ success, data, message }`, the 200 body of `campaigns.cancel`. */
type CampaignCancelResponse = SuccessBody<CampaignRoutes['cancel']>;
/** The answer of `campaigns.cancel`: messages already `sent`, messages `cancelled`, and the server's message. */
export type CampaignCancelResult = CampaignCancelResponse['data'] & Pick<CampaignCancelResponse, 'message'>;
/** `{ success, data, message }`, the 200 body of `campaigns.requeueFailed` (and `emails.requeueFailed`). */
type RequeueResponse = SuccessBody<CampaignRoutes['requeueFailed']>;
/** The answer of a requeue: messages `requeued`, those `refused` (suppressed, unsubscribed), and the server's message. */
export type RequeueResult = RequeueResponse['data'] & Pick<RequeueResponse, 'message'>;

// Workflows: an event starts an execution per contact, which walks a graph of steps
type WorkflowRoutes = Contract['workflows'];
export type WorkflowStepType = z.infer<typeof wire.WorkflowStepType>;
export type ExecutionStatus = z.infer<typeof wire.ExecutionStatus>;
export type StepRunStatus = z.infer<typeof wire.StepRunStatus>;
/** `branch` of a transition: `yes`/`no` out of a CONDITION step, `event`/`timeout` out of a WAIT_FOR_EVENT step. */
export type TransitionBranch = z.infer<typeof wire.TransitionBranch>;
export type DurationUnit = z.infer<typeof wire.DurationUnit>;
/** A workflow with its counts of `active` (RUNNING + WAITING) and `total` executions. */
export type Workflow = z.infer<typeof wire.Workflow>;
/** A workflow with its steps and transitions, as `create`, `get`, `update`, `enable` and `disable` return it. */
export type WorkflowDetail = z.infer<typeof wire.WorkflowDetail>;
/** A step as the server returns it; `config` is the step type's config (see {@link StepConfig}). */
export type WorkflowStep = z.infer<typeof wire.WorkflowStep>;
/** Where a step's `position` is drawn in the editor. */
export type StepPosition = WorkflowStep['position'];
export type WorkflowTransition = z.infer<typeof wire.WorkflowTransition>;
/** One contact's run through a workflow. */
export type Execution = z.infer<typeof wire.Execution>;
/** What an execution did at one step. */
export type StepRun = z.infer<typeof wire.StepRun>;
/** An execution with its step records, oldest first. */
export type ExecutionDetail = z.infer<typeof wire.ExecutionDetail>;
/** A field usable in a CONDITION step's filters, with its source, type and operators. */
export type WorkflowField = z.infer<typeof wire.WorkflowField>;

// Step configs, as requests send them (fields with a server default are optional)
/** SEND_EMAIL: the template to send, to the contact (default) or to a fixed `customEmail`. */
export type SendEmailStepConfig = z.input<typeof wire.SendEmailConfig>;
/** DELAY: wait `amount` `unit`s (at most one year). */
export type DelayStepConfig = z.input<typeof wire.DelayConfig>;
/** WAIT_FOR_EVENT: wait for the contact's `eventName`, at most `timeout` seconds when given. */
export type WaitForEventStepConfig = z.input<typeof wire.WaitForEventConfig>;
/** CONDITION: a condition tree, or one filter standing for a one-filter tree; branches `yes` and `no`. */
export type ConditionStepConfig = { condition: ConditionTreeInput } | ConditionFilter;
/** WEBHOOK: an http(s) call (`method` default POST); strings in `url` and `body` are rendered. */
export type WebhookStepConfig = z.input<typeof wire.WebhookConfig>;
/** UPDATE_CONTACT: data keys to set (null removes; strings are rendered), and a subscription change. */
export type UpdateContactStepConfig = z.input<typeof wire.UpdateContactConfig>;
/** EXIT: end the execution (status EXITED) with an optional `reason`. */
export type ExitStepConfig = z.input<typeof wire.ExitConfig>;
/** The config of each step type. */
export interface StepConfigs {
  SEND_EMAIL: SendEmailStepConfig;
  DELAY: DelayStepConfig;
  WAIT_FOR_EVENT: WaitForEventStepConfig;
  CONDITION: ConditionStepConfig;
  WEBHOOK: WebhookStepConfig;
  UPDATE_CONTACT: UpdateContactStepConfig;
  EXIT: ExitStepConfig;
}
/** The config of step type `T`; of any step type by default. */
export type StepConfig<T extends WorkflowStepType = WorkflowStepType> = StepConfigs[T];

// Workflows: inputs
/** What `workflows.create` takes; workflows are created disabled (add steps, then `enable`). */
export type WorkflowCreateBody = Omit<RouteInput<WorkflowRoutes['create']>['body'], 'enabled'>;
/** What `workflows.update` takes; enabling checks the graph (422 `VALIDATION_ERROR` naming each problem). */
export type WorkflowUpdateBody = RouteInput<WorkflowRoutes['update']>['body'];
/**
 * What `workflows.steps.add` takes, typed by step `type`: `config` is that type's config, required
 * when it has required fields. `name` defaults to the type's name, `position` to `{ x: 0, y: 0 }`.
 */
export type WorkflowStepInput<T extends WorkflowStepType = WorkflowStepType> = {
  [K in T]: { type: K; name?: string; position?: StepPosition } & (Partial<StepConfig<K>> extends StepConfig<K>
    ? { config?: StepConfig<K> }
    : { config: StepConfig<K> });
}[T];
/** What `workflows.steps.update` takes; a `config` replaces the step's whole config. */
export interface WorkflowStepUpdate<T extends WorkflowStepType = WorkflowStepType> {
  name?: string;
  position?: StepPosition;
  config?: StepConfig<T>;
}
/** What `workflows.transitions.add` takes; `branch` is needed out of CONDITION steps (`yes`/`no`). */
export type WorkflowTransitionInput = RouteInput<WorkflowRoutes['addTransition']>['body'];
/** What `workflows.executions.start` takes; `context` is available to steps as `workflow.*`. */
export type ExecutionStartBody = RouteInput<WorkflowRoutes['startExecution']>['body'];
/** Filters of `workflows.executions.list`: `status`, `contactId`, and the page's `limit` (default 20, at most 100) and `cursor`. */
export type ExecutionListQuery = RouteInput<WorkflowRoutes['listExecutions']>['query'];
/** One page of executions, newest first: follow `cursor` while `hasMore`. `total` is real only on the first page. */
export type ExecutionPage = SuccessBody<WorkflowRoutes['listExecutions']>;
/** The answer of `workflows.executions.cancelAll`: how many executions were cancelled. */
export type ExecutionCancelAllResult = SuccessBody<WorkflowRoutes['cancelAll']>;
/** The trigger event whose recorded data keys `workflows.fields` lists as `event.*`. */
export type WorkflowFieldsQuery = RouteInput<WorkflowRoutes['fields']>['query'];

// Deliverability: address verification and suppressions
type SuppressionRoutes = wire.Contract['suppressions'];
/** The result of `pigeon.verify`: flags, DNS facts (null when DNS did not answer in time) and reasons in words. */
export type Verification = z.infer<typeof wire.Verification>;
export type Suppression = z.infer<typeof wire.Suppression>;
export type SuppressionReason = z.infer<typeof wire.SuppressionReason>;
/** One page of `suppressions.list`: follow `cursor` while `hasMore`. */
export type SuppressionPage = SuccessBody<SuppressionRoutes['list']>;
export type SuppressionListQuery = RouteInput<SuppressionRoutes['list']>['query'];
type BillingRoutes = wire.Contract['billing'];

// Billing
/** What a queued email counts against: transactional (`/v1/send`), campaigns (tests too), workflows. */
export type BillingCategory = z.infer<typeof wire.BillingCategory>;
/** Monthly caps per category; null means no cap. */
export type BillingLimits = z.infer<typeof wire.BillingLimits>;
/** What `billing.setLimits` takes: categories left out keep their cap, null removes one. */
export type BillingLimitsUpdate = RouteInput<BillingRoutes['setLimits']>['body'];
/** This month's counters per category against the caps, `resetsAt`, and the Stripe subscription if any. */
export type BillingConsumption = z.infer<typeof wire.BillingConsumption>;
/** What `billing.checkout` takes: where Stripe sends the browser back to (default: the server's public URL). */
export type CheckoutBody = RouteInput<BillingRoutes['checkout']>['body'];
/** A Stripe checkout or portal session: send the browser to `url`. */
export type BillingRedirect = z.infer<typeof wire.RedirectSession>;
export type Invoice = z.infer<typeof wire.Invoice>;
export type InvoiceList = z.infer<typeof wire.Invoices>;
// Analytics
type AnalyticsRoutes = Contract['analytics'];
/** A time bound: a Date, or an ISO 8601 string with its offset. */
export type TimeBound = Date | string;
type WithBounds<Q> = Omit<Q, 'from' | 'to'> & { from?: TimeBound; to?: TimeBound };
/** The email metrics analytics reports, each the count of one event name. */
export type AnalyticsMetric = z.infer<typeof wire.AnalyticsMetric>;
/** `interval` (`hour` or `day`, default `day`), range (default the last 30 days), `campaignId`, `templateId`. */
export type TimeseriesQuery = WithBounds<RouteInput<AnalyticsRoutes['timeseries']>['query']>;
/** Email metrics per bucket; every bucket of the range is present, `totals` sums them. */
export type Timeseries = SuccessBody<AnalyticsRoutes['timeseries']>;
/** `limit` (1 to 100, default 10), `sortBy` (a metric, default `sent`), range. */
export type TopCampaignsQuery = WithBounds<RouteInput<AnalyticsRoutes['topCampaigns']>['query']>;
export type TopCampaigns = SuccessBody<AnalyticsRoutes['topCampaigns']>;
export type CampaignActivity = z.infer<typeof wire.CampaignActivity>;
export type AnalyticsRangeQuery = WithBounds<RouteInput<AnalyticsRoutes['campaignStats']>['query']>;
/** Totals and rates of all campaign email in the range, and how many campaigns sent. */
export type CampaignStatsSummary = SuccessBody<AnalyticsRoutes['campaignStats']>;
/** `limit` (1 to 100, default 10), `type` (`custom`, the default, or `all`), range. */
export type TopEventsQuery = WithBounds<RouteInput<AnalyticsRoutes['topEvents']>['query']>;
export type TopEvents = SuccessBody<AnalyticsRoutes['topEvents']>;

// Uploads
/** A stored image: its public `url`, the `contentType` detected from its bytes, its `size` in bytes. */
export type UploadedImage = z.infer<typeof wire.UploadedImage>;
export type ImageContentType = z.infer<typeof wire.ImageContentType>;

// Event webhooks and the email resource
type WebhookEndpointRoutes = wire.Contract['webhookEndpoints'];
type SentEmailRoutes = wire.Contract['sentEmails'];
/** Every payload Pigeon POSTs to a webhook endpoint, as a delivery's `payload` keeps it. */
export type WebhookEventPayload = z.infer<typeof wire.WebhookEvent>;
/** The payloads of Pigeon's own events (`email.*`, `contact.*`, `segment.<slug>.entry|exit`, `webhook.test`). */
export type PigeonWebhookEvent = Exclude<WebhookEventPayload, wire.CustomEventPayload>;
/** The `data` of an event your application tracked. */
export type TrackedEventData = wire.CustomEventPayload['data'];
/** An event your application tracked (`POST /v1/track`) and Pigeon forwarded, under its own name. */
export type TrackedEventPayload<Name extends string = string> = {
  type: Name;
  timestamp: string;
  data: TrackedEventData;
};
/**
 * What `webhooks.verify` returns: a union narrowed by `type` (`switch (event.type)`). The events you
 * track arrive under their own names: name them as `Tracked` to have them in the union
 * (`webhooks.verify<'order.created' | 'order.paid'>(…)`); `WebhookEvent<string>` takes any name,
 * but a `type` that may be any string no longer narrows the union.
 */
export type WebhookEvent<Tracked extends string = never> = PigeonWebhookEvent | TrackedEventPayload<Tracked>;
export type WebhookEventTypeName = z.infer<typeof wire.WebhookEventTypeName>;
export type WebhookEndpoint = z.infer<typeof wire.WebhookEndpoint>;
export type WebhookEndpointCreateBody = RouteInput<WebhookEndpointRoutes['create']>['body'];
export type WebhookEndpointUpdateBody = RouteInput<WebhookEndpointRoutes['update']>['body'];
export type WebhookDelivery = z.infer<typeof wire.WebhookDelivery>;
export type WebhookDeliveryStatus = z.infer<typeof wire.WebhookDeliveryStatus>;
export type WebhookDeliveryPage = SuccessBody<WebhookEndpointRoutes['deliveries']>;
export type WebhookDeliveryListQuery = RouteInput<WebhookEndpointRoutes['deliveries']>['query'];
/** Which FAILED deliveries `webhooks.deliveries.recover` sends again: those created in `[after, before)`. */
export type WebhookDeliveryRecoveryBody = RouteInput<WebhookEndpointRoutes['recover']>['body'];
export type EmailStatus = z.infer<typeof wire.EmailStatus>;
export type EmailSource = z.infer<typeof wire.EmailSource>;
export type EmailSummary = z.infer<typeof wire.EmailSummary>;
export type EmailDetail = z.infer<typeof wire.EmailDetail>;
export type EmailPage = SuccessBody<SentEmailRoutes['list']>;
export type EmailListQuery = RouteInput<SentEmailRoutes['list']>['query'];

// Accounts, projects and members: the session routes (what Pigeon's console calls, `PigeonAccount`)
type AuthRoutes = wire.Contract['auth'];
type UserRoutes = wire.Contract['users'];
export type User = z.infer<typeof wire.User>;
/** An email and a password (`auth.login`, `auth.signup`). */
export type Credentials = RouteInput<AuthRoutes['login']>['body'];
/** The sign-in providers this deployment has, each with the URL that starts its sign-in. */
export type OAuthConfig = z.infer<typeof wire.OAuthConfig>;
export type OAuthProviderId = z.infer<typeof wire.OAuthProviderId>;
export type SignInMethods = z.infer<typeof wire.SignInMethods>;
export type InvitationAccepted = SuccessBody<AuthRoutes['acceptInvitation']>;
export type Role = z.infer<typeof wire.Role>;
export type TrackingMode = z.infer<typeof wire.TrackingMode>;
/** A project as its member sees it: the keys (`secretKey` null for a MEMBER), role and settings. */
export type Project = z.infer<typeof wire.Project>;
export type ProjectUpdateBody = RouteInput<UserRoutes['updateProject']>['body'];
export type ProjectReset = SuccessBody<UserRoutes['resetProject']>;
export type Member = z.infer<typeof wire.Member>;
export type Invitation = z.infer<typeof wire.Invitation>;
export type Members = z.infer<typeof wire.Members>;
/** `added` (the address had an account) or `invited` (an invitation was mailed). */
export type InviteResult = z.infer<typeof wire.InviteResult>;
export type MemberRemoved = z.infer<typeof wire.MemberRemoved>;
export type SetupState = z.infer<typeof wire.SetupState>;
export type SecurityState = z.infer<typeof wire.SecurityState>;

// Topics and contacts' choices
type TopicRoutes = wire.Contract['topics'];
export type Topic = z.infer<typeof wire.Topic>;
export type TopicDefaultSubscription = z.infer<typeof wire.TopicDefaultSubscription>;
export type TopicVisibility = z.infer<typeof wire.TopicVisibility>;
export type TopicCreateBody = RouteInput<TopicRoutes['create']>['body'];
export type TopicUpdateBody = RouteInput<TopicRoutes['update']>['body'];
/** One topic as one contact has it (`topics.ofContact`). */
export type ContactTopic = z.infer<typeof wire.ContactTopic>;
/** One change of `topics.setForContact`. */
export type ContactTopicChoice = RouteInput<TopicRoutes['setContactTopics']>['body']['topics'][number];

// Inbound mail routes
type InboundRouteRoutes = wire.Contract['inboundRoutes'];
export type InboundRoute = z.infer<typeof wire.InboundRoute>;
export type InboundRouteAction = z.infer<typeof wire.InboundRouteAction>;
export type InboundRouteCreateBody = RouteInput<InboundRouteRoutes['create']>['body'];
export type InboundRouteUpdateBody = RouteInput<InboundRouteRoutes['update']>['body'];
/** A message an inbound route took (`inboundRoutes.emails`). */
export type InboundEmail = z.infer<typeof wire.InboundEmail>;
export type InboundEmailListQuery = RouteInput<InboundRouteRoutes['listEmails']>['query'];
