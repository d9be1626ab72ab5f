// Same-work baseline for POST /v1/send: bare node:http + a `pg` pool + the key lookup and Pigeon's
// send service (`sendEmail` from the server's build: sender check, contact upsert, composition and
// the queued email in one transaction). No express, ts-rest, zod, logging or middleware.
import { bearer, pool, serveJson, serverModules } from './_db.mjs';

const { sendEmail, hashKey, keyTypeOf } = await serverModules();
const db = pool();
const deps = {
  db: { pool: db },
  config: {
    http: { publicUrl: process.env.PUBLIC_URL ?? 'http://127.0.0.1' },
    secrets: { linkSigning: 'bench-baseline-link-signing-secret-0123456789' },
    delivery: { attachmentLimitBytes: 10 * 1024 * 1024 },
  },
};

serveJson('bare-send', async (req, body) => {
  const key = bearer(req);
  if (keyTypeOf(key ?? '') !== 'secret') return [401, { error: 'bad key' }];
  const { rows } = await db.query({
    name: 'baseline.key',
    text: 'SELECT id FROM projects WHERE secret_key_hash = $1',
    values: [hashKey(key)],
  });
  if (!rows[0]) return [401, { error: 'bad key' }];
  return [200, { success: true, data: await sendEmail(deps, rows[0].id, body) }];
});
