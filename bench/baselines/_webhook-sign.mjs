// The Standard Webhooks signature the webhook ceilings put on every request (bare-webhooks.mjs,
// bare-durable-webhooks.mjs), as Pigeon does: HMAC-SHA256 of `<id>.<timestamp>.<body>` with the
// endpoint's secret (`whsec_<base64>`), computed per request.
import { createHmac } from 'node:crypto';

/** `(id, body) → headers` for the endpoint secret `secret`. */
export function webhookSigner(secret) {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return (id, body) => {
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
    return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1,${signature}` };
  };
}
