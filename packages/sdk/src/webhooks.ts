import type { Transport } from './transport.js';
import { WebhookDeliveries } from './webhook-deliveries.js';
import { WebhookEndpoints } from './webhook-endpoints.js';
import { verifyWebhook } from './webhook-verify.js';

/** `pigeon.webhooks`: verify incoming webhooks, manage endpoints, inspect and replay deliveries. */
export class Webhooks {
  readonly endpoints: WebhookEndpoints;
  readonly deliveries: WebhookDeliveries;
  /** Same as the standalone `webhooks.verify(rawBody, headers, secret)`. */
  readonly verify = verifyWebhook;

  constructor(transport: Transport) {
    this.endpoints = new WebhookEndpoints(transport);
    this.deliveries = new WebhookDeliveries(transport);
  }
}
