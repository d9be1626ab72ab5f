import {
  BillingCategory,
  CampaignStatus,
  CONDITION_OPERATORS as CONTRACT_CONDITION_OPERATORS,
  PERMISSIONS as CONTRACT_PERMISSIONS,
  ConditionLogic,
  ConditionUnit,
  ContentType,
  permits as contractPermits,
  EmailSource,
  EmailStatus,
  ExecutionStatus,
  Role,
  SegmentType,
  TrackingMode,
  WebhookDeliveryStatus,
  WebhookEventTypeName,
} from './contract.js';

// The contract's value sets, for pickers and filters (a console, a CLI): read from the contract's
// enums, never re-declared, so a value the server adds shows up here with the next SDK build.
export const CAMPAIGN_STATUSES = CampaignStatus.options;
export const EMAIL_STATUSES = EmailStatus.options;
export const EMAIL_SOURCES = EmailSource.options;
export const WEBHOOK_EVENT_TYPES = WebhookEventTypeName.options;
export const WEBHOOK_DELIVERY_STATUSES = WebhookDeliveryStatus.options;
export const ROLES = Role.options;
export const TRACKING_MODES = TrackingMode.options;
/** Which operators each kind of condition field takes, and the value each needs (see ConditionValueRule). */
export const CONDITION_OPERATORS = CONTRACT_CONDITION_OPERATORS;
export const CONDITION_UNITS = ConditionUnit.options;
export const CONDITION_LOGICS = ConditionLogic.options;
export const CONTENT_TYPES = ContentType.options;
export const SEGMENT_TYPES = SegmentType.options;
export const EXECUTION_STATUSES = ExecutionStatus.options;
export const BILLING_CATEGORIES = BillingCategory.options;

/**
 * Who may do what in a project: the server's one table (permission → roles), so a UI offers what
 * the API will allow; `permits('project.manage', role)` answers for one role.
 */
export const PERMISSIONS = CONTRACT_PERMISSIONS;
export type Permission = keyof typeof PERMISSIONS;
export const permits: (permission: Permission, role: (typeof ROLES)[number]) => boolean = contractPermits;
