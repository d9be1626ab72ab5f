// Same-work baseline for POST /v1/send: bare node:http + a `pg` pool + Pigeon's key lookup (with its
// rate-limit count, as every keyed request has) and Pigeon's send service (`sendEmail` from the
// server's build: sender check, contact upsert, composition and the queued email in one
// transaction), after the contract's body schema (the service takes the parsed body: given the raw
// JSON it refused every send, 422 "No sender", and the bench counted those answers as its rate;
// found 2026-11-28).
// No express, ts-rest, logging or middleware.
import { contract } from '../../packages/contract/dist/index.js';
import { bearer, pool, serveJson, serverModules } from './_db.mjs';

const { sendEmail, findProjectByKey, keyTypeOf, systemClock } = await serverModules();
const db = pool();
const limit = Number(process.env.RATE_LIMIT_PER_MINUTE ?? 0);
const deps = {
  db: { pool: db },
  clock: systemClock,
  config: {
    http: { publicUrl: process.env.PUBLIC_URL ?? 'http://127.0.0.1' },
    secrets: { linkSigning: 'bench-baseline-link-signing-secret-0123456789' },
    delivery: { attachmentLimitBytes: 10 * 1024 * 1024 },
  },
};

serveJson('bare-send', async (req, body) => {
  const key = bearer(req);
  if (keyTypeOf(key ?? '') !== 'secret') return [401, { error: 'bad key' }];
  const found = await findProjectByKey(db, key, 'secret', limit);
  if (!found) return [401, { error: 'bad key' }];
  const parsed = contract.emails.send.body.safeParse(body);
  if (!parsed.success) return [422, { error: parsed.error.message }];
  return [200, { success: true, data: await sendEmail(deps, found.project.id, parsed.data, body) }];
});
