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

/** POSTs `body` signed as `id` over the undici Pool `pool` to `url`'s path; throws unless 2xx. */
export async function postSigned(pool, url, sign, id, body) {
  const res = await pool.request({
    path: url.pathname,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...sign(id, body) },
    body,
  });
  await res.body.dump();
  if (res.statusCode < 200 || res.statusCode >= 300) throw new Error(`HTTP ${res.statusCode}`);
}
