/**
 * The webhooks module's public face: what other modules may import from it (a dependency-cruiser
 * rule, `faces`, refuses an import of any other file of the module from outside it).
 */
export { rotateWebhookSecret } from './secrets.js';
export type { HostResolver, WebhookResult } from './service.js';
export {
  forbiddenReason,
  generateWebhookSecret,
  isLoopbackName,
  newWebhookId,
  sendWebhook,
  WEBHOOK_DNS,
  WEBHOOK_MAX_ATTEMPTS,
  WEBHOOK_TIMEOUT_MS,
  WebhookPools,
  webhookRetryDelayMs,
  webhookSecrets,
} from './service.js';
