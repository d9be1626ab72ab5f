export { createPigeon, type ImportOptions, Pigeon, type PigeonOptions, type PublicPigeon } from './client.js';
export { PigeonError, type PigeonErrorInit } from './errors.js';
export { generateIdempotencyKey, type IdempotencyOptions } from './idempotency.js';
export type { WaitForJobOptions } from './jobs.js';
export type { CursorPage, OffsetPage } from './pagination.js';
export type { RequestOptions, RouteInput, SuccessBody } from './transport.js';
export type {
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
