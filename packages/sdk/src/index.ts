import type { Analytics as AnalyticsResource } from './analytics.js';
import type { Billing as BillingResource } from './billing.js';
import type { Campaigns as CampaignsResource } from './campaigns.js';
import type { Suppressions as SuppressionsResource } from './deliverability.js';
import type { WorkflowExecutions as WorkflowExecutionsResource } from './executions.js';
import type { InboundRoutes as InboundRoutesResource } from './inbound-routes.js';
import type { Segments as SegmentsResource } from './segments.js';
import type { Topics as TopicsResource } from './topics.js';
import type { TrackingDomains as TrackingDomainsResource } from './tracking-domains.js';
import type { Uploads as UploadsResource } from './uploads.js';
import type { WebhookDeliveries as WebhookDeliveriesResource } from './webhook-deliveries.js';
import type { WebhookEndpoints as WebhookEndpointsResource } from './webhook-endpoints.js';
import type { Webhooks as WebhooksResource } from './webhooks.js';
import type {
  WorkflowSteps as WorkflowStepsResource,
  Workflows as WorkflowsResource,
  WorkflowTransitions as WorkflowTransitionsResource,
} from './workflows.js';

export { PigeonAccount, type PigeonAccountOptions } from './account.js';
export type { CampaignProgress, CampaignSendOptions, WaitForSentOptions } from './campaigns.js';
export { createPigeon, type ImportOptions, Pigeon, type PigeonOptions, type PublicPigeon } from './client.js';
export { PigeonError, type PigeonErrorCode, type PigeonErrorInit } from './errors.js';
export { generateIdempotencyKey, type IdempotencyOptions } from './idempotency.js';
export type { WaitForJobOptions } from './jobs.js';
export type { CursorPage, OffsetPage, TotalPage } from './pagination.js';
export type { AddMembersOptions } from './segments.js';
export type { RequestOptions } from './transport.js';
export type {
  ActivityItem,
  ActivityListQuery,
  ActivityPage,
  ActivityRecentCount,
  ActivityStats,
  ActivityType,
  ActivityTypeCount,
  AnalyticsMetric,
  AnalyticsRangeQuery,
  AudienceCount,
  AudienceCountBody,
  AudienceType,
  BillingCategory,
  BillingConsumption,
  BillingLimits,
  BillingLimitsUpdate,
  BillingRedirect,
  Campaign,
  CampaignActivity,
  CampaignCancelResult,
  CampaignInput,
  CampaignListQuery,
  CampaignPage,
  CampaignSendResult,
  CampaignStats,
  CampaignStatsSummary,
  CampaignStatus,
  CampaignTestResult,
  CheckoutBody,
  ConditionCount,
  ConditionFilter,
  ConditionGroup,
  ConditionGroupInput,
  ConditionOperator,
  ConditionStepConfig,
  ConditionTree,
  ConditionTreeInput,
  ConditionUnit,
  Contact,
  ContactCreateBody,
  ContactFields,
  ContactListQuery,
  ContactPage,
  ContactTopic,
  ContactTopicChoice,
  ContactUpdateBody,
  ContactWithMeta,
  Credentials,
  DelayStepConfig,
  DmarcAlignment,
  DmarcRange,
  DmarcSource,
  DnsRecord,
  Domain,
  DomainDetail,
  DomainDmarc,
  DomainWarmup,
  DomainWarmupSettings,
  DurationUnit,
  EmailDetail,
  EmailListQuery,
  EmailPage,
  EmailSource,
  EmailStatus,
  EmailSummary,
  ErrorCode,
  ErrorEnvelope,
  Event,
  EventListQuery,
  EventNameSummary,
  EventPage,
  EventStats,
  EventStatsQuery,
  EventUsage,
  Execution,
  ExecutionCancelAllResult,
  ExecutionDetail,
  ExecutionListQuery,
  ExecutionPage,
  ExecutionStartBody,
  ExecutionStatus,
  ExitStepConfig,
  FieldError,
  FieldInfo,
  FieldUsage,
  FieldValues,
  FieldValuesQuery,
  Health,
  ImageContentType,
  InboundEmail,
  InboundEmailListQuery,
  InboundRoute,
  InboundRouteAction,
  InboundRouteCreateBody,
  InboundRouteUpdateBody,
  Invitation,
  InvitationAccepted,
  InviteResult,
  Invoice,
  InvoiceList,
  Job,
  JobAccepted,
  JobKind,
  JobStatus,
  LookupResult,
  Member,
  MemberRemoved,
  MemberResult,
  MemberStatus,
  Members,
  MembersChange,
  OAuthConfig,
  OAuthProviderId,
  PigeonWebhookEvent,
  Project,
  ProjectReset,
  ProjectUpdateBody,
  RequeueResult,
  Role,
  SecurityState,
  Segment,
  SegmentComputeResult,
  SegmentContactPage,
  SegmentContactsQuery,
  SegmentCreateBody,
  SegmentType,
  SegmentUpdateBody,
  SegmentUsage,
  SendBatchResult,
  SendBody,
  SendEmailStepConfig,
  SenderCheck,
  SenderCheckRule,
  SenderCheckRuleId,
  SenderCheckStatus,
  SendResult,
  SendWarning,
  SetupState,
  SignInMethods,
  StepConfig,
  StepConfigs,
  StepPosition,
  StepRun,
  StepRunStatus,
  Suppression,
  SuppressionListQuery,
  SuppressionPage,
  SuppressionReason,
  Template,
  TemplateCreateBody,
  TemplateListQuery,
  TemplatePage,
  TemplatePreview,
  TemplatePreviewBody,
  TemplateUpdateBody,
  TemplateUsage,
  TimeBound,
  Timeseries,
  TimeseriesQuery,
  TopCampaigns,
  TopCampaignsQuery,
  TopEvents,
  TopEventsQuery,
  Topic,
  TopicCreateBody,
  TopicDefaultSubscription,
  TopicUpdateBody,
  TopicVisibility,
  TrackBody,
  TrackedEventData,
  TrackedEventPayload,
  TrackingDomain,
  TrackingMode,
  TrackResult,
  TransitionBranch,
  UpdateContactStepConfig,
  UploadedImage,
  User,
  Verification,
  WaitForEventStepConfig,
  WebhookDelivery,
  WebhookDeliveryListQuery,
  WebhookDeliveryPage,
  WebhookDeliveryStatus,
  WebhookEndpoint,
  WebhookEndpointCreateBody,
  WebhookEndpointUpdateBody,
  WebhookEvent,
  WebhookEventPayload,
  WebhookEventTypeName,
  WebhookStepConfig,
  Workflow,
  WorkflowCreateBody,
  WorkflowDetail,
  WorkflowField,
  WorkflowFieldsQuery,
  WorkflowStep,
  WorkflowStepInput,
  WorkflowStepType,
  WorkflowStepUpdate,
  WorkflowTransition,
  WorkflowTransitionInput,
  WorkflowUpdateBody,
} from './types.js';
export { MAX_UPLOAD_BYTES, type UploadSource } from './upload.js';
export type { ImageUploadOptions } from './uploads.js';
export {
  BILLING_CATEGORIES,
  CAMPAIGN_STATUSES,
  CONDITION_LOGICS,
  CONDITION_OPERATORS,
  CONDITION_UNITS,
  CONTENT_TYPES,
  EMAIL_SOURCES,
  EMAIL_STATUSES,
  EXECUTION_STATUSES,
  PERMISSIONS,
  type Permission,
  permits,
  ROLES,
  SEGMENT_TYPES,
  TRACKING_MODES,
  WEBHOOK_DELIVERY_STATUSES,
  WEBHOOK_EVENT_TYPES,
} from './values.js';
export { SDK_VERSION } from './version.js';
export {
  type VerifyOptions,
  verifyWebhook,
  type WebhookHeaders,
  WebhookVerificationError,
  type WebhookVerificationReason,
  webhooks,
} from './webhook-verify.js';
export type { RemoveStepOptions } from './workflows.js';

/**
 * The type of `pigeon.segments`. An alias rather than a re-export of the class, so the bundled
 * declarations do not offer a `Segments` value that the JavaScript build does not export.
 */
export type Segments = SegmentsResource;

/** The type of `pigeon.suppressions` (an alias for the same reason as {@link Segments}). */
export type Suppressions = SuppressionsResource;
/** The type of `pigeon.inboundRoutes`. */
export type InboundRoutes = InboundRoutesResource;
/** The type of `pigeon.trackingDomains`. */
export type TrackingDomains = TrackingDomainsResource;
/** The type of `pigeon.topics`. */
export type Topics = TopicsResource;
/** The type of `pigeon.billing` (an alias for the same reason as {@link Segments}). */
export type Billing = BillingResource;
/** The type of `pigeon.analytics` (an alias for the same reason as {@link Segments}). */
export type Analytics = AnalyticsResource;

/** The type of `pigeon.uploads` (an alias for the same reason as {@link Segments}). */
export type Uploads = UploadsResource;

/** The type of `pigeon.campaigns` (an alias for the same reason as {@link Segments}). */
export type Campaigns = CampaignsResource;

/** The type of `pigeon.workflows` (an alias for the same reason as {@link Segments}). */
export type Workflows = WorkflowsResource;

/** The type of `pigeon.webhooks` (an alias for the same reason as {@link Segments}). */
export type Webhooks = WebhooksResource;
/** The type of `pigeon.webhooks.endpoints`. */
export type WebhookEndpoints = WebhookEndpointsResource;
/** The type of `pigeon.webhooks.deliveries`. */
export type WebhookDeliveries = WebhookDeliveriesResource;

/** The type of `pigeon.workflows.steps`. */
export type WorkflowSteps = WorkflowStepsResource;

/** The type of `pigeon.workflows.transitions`. */
export type WorkflowTransitions = WorkflowTransitionsResource;

/** The type of `pigeon.workflows.executions`. */
export type WorkflowExecutions = WorkflowExecutionsResource;

/**
 * @internal The contract's zod schema of each workflow step type's config, by type: the console
 * builds its step forms from them. Left out of the published declarations (no zod types there).
 */
export { STEP_CONFIGS as stepConfigSchemas } from './contract.js';
