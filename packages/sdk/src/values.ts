import {
  EmailSource,
  EmailStatus,
  Role,
  TrackingMode,
  WebhookDeliveryStatus,
  WebhookEventTypeName,
} from './contract.js';

// The contract's value sets, for pickers and filters (a console, a CLI): read from the contract's
// enums, never re-declared, so a value the server adds shows up here with the next SDK build.
export const EMAIL_STATUSES = EmailStatus.options;
export const EMAIL_SOURCES = EmailSource.options;
export const WEBHOOK_EVENT_TYPES = WebhookEventTypeName.options;
export const WEBHOOK_DELIVERY_STATUSES = WebhookDeliveryStatus.options;
export const ROLES = Role.options;
export const TRACKING_MODES = TrackingMode.options;
