// Helpers of the sending scenarios (send-accept, delivery-10k): the SMTP sink's client, a verified
// sender domain, percentiles.

/** The sender domain of the sending scenarios. */
export const SENDER_DOMAIN = 'bench.example';
export const SENDER = `hello@${SENDER_DOMAIN}`;

/** The small message every sending scenario sends: one variable, rendered per recipient. */
export const smallMessage = (to) => ({
  to,
  from: SENDER,
  subject: 'Hi {{name}}',
  body: '<p>Hello {{name}}</p>',
  data: { name: 'Ada' },
});

/**
 * The client of a running services/smtp-sink.mjs (`handle` from lib/process.mjs startNode): its
 * SMTP URL for Pigeon's SMTP_URL, and stats / messages / reset over its control port.
 */
export function smtpSinkClient(handle) {
  const m = /listening on (http:\/\/\S+) (smtp:\/\/\S+)/.exec(handle.output());
  if (!m) throw new Error(`smtp-sink printed no address:\n${handle.output()}`);
  const [, control, url] = m;
  const call = async (path, method = 'GET') => {
    const res = await fetch(control + path, { method });
    if (!res.ok) throw new Error(`smtp-sink ${method} ${path} → ${res.status}`);
    return res.json();
  };
  return {
    name: handle.name,
    pid: handle.pid,
    url,
    alive: handle.alive,
    output: handle.output,
    stop: handle.stop,
    /** `{ count, bytes, withDkim, withoutMessageId, firstAt, lastAt, connections, errors, lastError }` (epoch ms). */
    stats: () => call('/stats'),
    /**
     * Every message received since the last reset: `{ messageId, at (epoch ms), bytes, dkim, to }`
     * (`to`: the envelope's RCPT TO addresses, comma-separated).
     */
    messages: async () =>
      (await call('/messages')).messages.map(([messageId, at, bytes, dkim, to]) => ({
        messageId,
        at,
        bytes,
        dkim: dkim === 1,
        to,
      })),
    reset: () => call('/reset', 'POST'),
  };
}

/**
 * Adds `bench.example` to the first project (POST /domains with the secret key) and marks it
 * verified in SQL: with SMTP_URL set, Pigeon would wait for its DNS records. Mail from it is
 * DKIM-signed with the domain's RSA-2048 key.
 */
export async function verifiedSenderDomain(ctx) {
  const res = await ctx.fetch('/domains', { method: 'POST', headers: ctx.auth, json: { domain: SENDER_DOMAIN } });
  if (res.status !== 201 && res.status !== 409)
    throw new Error(`POST /domains → ${res.status}: ${(await res.text()).slice(0, 500)}`);
  await res.body?.cancel();
  const { rowCount } = await ctx.sql(
    'UPDATE domains SET verified_at = coalesce(verified_at, now()) WHERE project_id = $1 AND domain = $2',
    [ctx.projectId, SENDER_DOMAIN],
  );
  if (rowCount !== 1) throw new Error(`domain ${SENDER_DOMAIN} not found after POST /domains`);
}

/** POST /v1/send; throws unless 200 with one queued email per recipient. */
export async function send(ctx, body) {
  const res = await ctx.fetch('/v1/send', { method: 'POST', headers: ctx.auth, json: body });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`POST /v1/send → ${res.status}: ${text.slice(0, 500)}`);
  const out = JSON.parse(text);
  const expected = Array.isArray(body.to) ? body.to.length : 1;
  if (!out.success || out.data?.emails?.length !== expected)
    throw new Error(`POST /v1/send queued ${out.data?.emails?.length} of ${expected}: ${text.slice(0, 500)}`);
  return out.data;
}

/** The p-th percentile (0–100, nearest rank) of ascending `sorted`. */
export function percentile(sorted, p) {
  if (!sorted.length) return null;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** Status counts of the project's emails. */
export async function emailCounts(ctx) {
  const { rows } = await ctx.sql(
    `SELECT count(*)::int AS total,
            count(*) FILTER (WHERE status = 'QUEUED')::int AS queued,
            count(*) FILTER (WHERE status = 'SENDING')::int AS sending,
            count(*) FILTER (WHERE status = 'SENT')::int AS sent,
            count(*) FILTER (WHERE status IN ('FAILED', 'BOUNCED'))::int AS failed
     FROM emails WHERE project_id = $1`,
    [ctx.projectId],
  );
  return rows[0];
}

export const sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const abort = () => {
      clearTimeout(t);
      reject(signal.reason);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', abort, { once: true });
  });
