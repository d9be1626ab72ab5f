// Same-work baseline for POST /v1/track: bare node:http + a `pg` pool + the statement Pigeon runs
// (`trackWithKey` from the server's build: key check, rate-limit count, contact upsert,
// subscription event and event insert in one prepared statement, one per request). No express,
// ts-rest, zod, logging or middleware: what Pigeon's stack costs on top is the difference.
import { bearer, pool, serveJson, serverModules } from './_db.mjs';

const { trackWithKey, hashKey, keyTypeOf } = await serverModules();
const db = pool();
const limit = Number(process.env.RATE_LIMIT_PER_MINUTE ?? 0);

serveJson('bare-track', async (req, body) => {
  const key = bearer(req);
  const keyType = key && keyTypeOf(key);
  if (!keyType) return [401, { error: 'bad key' }];
  if (typeof body?.email !== 'string' || typeof body?.event !== 'string') return [422, { error: 'bad body' }];
  const { check, result } = await trackWithKey(db, { keyType, keyHash: hashKey(key) }, limit, body);
  if (!check.found) return [401, { error: 'bad key' }];
  return [200, { success: true, data: result }];
});
