import type { Campaigns as CampaignsResource } from './campaigns.js';
import type { Segments as SegmentsResource } from './segments.js';

export type { CampaignSendOptions } from './campaigns.js';
export { createPigeon, type ImportOptions, Pigeon, type PigeonOptions, type PublicPigeon } from './client.js';
export { PigeonError, type PigeonErrorInit } from './errors.js';
export { generateIdempotencyKey, type IdempotencyOptions } from './idempotency.js';
export type { WaitForJobOptions } from './jobs.js';
export type { CursorPage, OffsetPage, TotalPage } from './pagination.js';
export type { AddMembersOptions } from './segments.js';
export type { RequestOptions, RouteInput, SuccessBody } from './transport.js';
export type {
  ActivityItem,
  ActivityListQuery,
  ActivityPage,
  ActivityRecentCount,
  ActivityStats,
  ActivityType,
  ActivityTypeCount,
  AudienceType,
  Campaign,
  CampaignCancelResult,
  CampaignInput,
  CampaignListQuery,
  CampaignPage,
  CampaignSendResult,
  CampaignStats,
  CampaignStatus,
  CampaignTestResult,
  ConditionFilter,
  ConditionGroup,
  ConditionGroupInput,
  ConditionOperator,
  ConditionTree,
  ConditionTreeInput,
  ConditionUnit,
  Contact,
  ContactCreateBody,
  ContactFields,
  ContactListQuery,
  ContactPage,
  ContactUpdateBody,
  ContactWithMeta,
  Contract,
  DnsRecord,
  Domain,
  ErrorEnvelope,
  Event,
  EventListQuery,
  EventNameSummary,
  EventPage,
  EventStats,
  EventStatsQuery,
  EventUsage,
  FieldError,
  FieldInfo,
  FieldUsage,
  FieldValues,
  FieldValuesQuery,
  Health,
  Job,
  JobAccepted,
  JobKind,
  JobStatus,
  LookupResult,
  MemberResult,
  MemberStatus,
  MembersChange,
  Segment,
  SegmentComputeResult,
  SegmentContactPage,
  SegmentContactsQuery,
  SegmentCreateBody,
  SegmentType,
  SegmentUpdateBody,
  SendBody,
  SendResult,
  Template,
  TemplateCreateBody,
  TemplateListQuery,
  TemplatePage,
  TemplateUpdateBody,
  TemplateUsage,
  TrackBody,
  TrackResult,
} from './types.js';
export { MAX_UPLOAD_BYTES, type UploadSource } from './upload.js';

/**
 * The type of `pigeon.segments`. An alias rather than a re-export of the class, so the bundled
 * declarations do not offer a `Segments` value that the JavaScript build does not export.
 */
export type Segments = SegmentsResource;

/** The type of `pigeon.campaigns` (an alias for the same reason as {@link Segments}). */
export type Campaigns = CampaignsResource;
