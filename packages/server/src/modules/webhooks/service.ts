/** Webhook delivery: what the workflow engine's WEBHOOK step calls. */
export { forbiddenReason, isForbiddenAddress } from './guard.js';
export { RESERVED_HEADERS, WEBHOOK_USER_AGENT } from './headers.js';
export { RESPONSE_EXCERPT_BYTES, WebhookPools } from './request.js';
export {
  classifyStatus,
  WEBHOOK_MAX_ATTEMPTS,
  WEBHOOK_MAX_DELAY_MS,
  type WebhookOutcome,
  webhookRetryDelayMs,
} from './retry.js';
export {
  PREVIOUS_SECRET_GRACE_HOURS,
  type RotatedSecret,
  rotateWebhookSecret,
  webhookSecrets,
} from './secrets.js';
export {
  MAX_REDIRECTS,
  sendWebhook,
  WEBHOOK_DNS,
  WEBHOOK_TIMEOUT_MS,
  type WebhookRequest,
  type WebhookResult,
} from './send.js';
export { generateWebhookSecret, newWebhookId, webhookHeaders, webhookSignature } from './sign.js';
export { type AddressPolicy, type HostResolver, isLoopbackName } from './target.js';
