// Minimal-work baseline for POST /v1/track: bare node:http + a `pg` pool + ONE prepared statement
// per request that upserts the contact (merging its data) and inserts the event, on the same
// embedded PostgreSQL (so the same tables, indexes and change-feed triggers). The key is resolved
// to its project once and kept in memory: no key check, rate-limit count, idempotency, data rules
// or subscription events per request. What a track cannot do less than; Pigeon's distance from it
// is the price of its promises.
import { bearer, pool, requireServerDep, serveJson, serverModules } from './_db.mjs';

const { hashKey, keyTypeOf } = await serverModules();
const { uuidv7 } = requireServerDep('uuidv7');
const db = pool();
const projects = new Map();

const TRACK = `
  WITH c AS (
    INSERT INTO contacts AS c (id, project_id, email, subscribed, data) VALUES ($1, $2, $3, true, $4)
    ON CONFLICT (project_id, email) DO UPDATE SET data = c.data || EXCLUDED.data, updated_at = now()
    RETURNING c.id
  )
  INSERT INTO events (id, project_id, contact_id, name, data)
  SELECT $5, $2, c.id, $6, $4 FROM c
  RETURNING contact_id, id, created_at`;

async function projectOf(key) {
  const type = keyTypeOf(key);
  if (!type) return null;
  if (!projects.has(key)) {
    const { rows } = await db.query(`SELECT id FROM projects WHERE ${type}_key_hash = $1`, [hashKey(key)]);
    if (!rows[0]) return null;
    projects.set(key, rows[0].id);
  }
  return projects.get(key);
}

serveJson('bare-minimal-track', async (req, body) => {
  const projectId = await projectOf(bearer(req) ?? '');
  if (!projectId) return [401, { error: 'bad key' }];
  if (typeof body?.email !== 'string' || typeof body?.event !== 'string') return [422, { error: 'bad body' }];
  const data = JSON.stringify(body.data ?? {});
  const { rows } = await db.query({
    name: 'bare-minimal-track',
    text: TRACK,
    values: [uuidv7(), projectId, body.email, data, uuidv7(), body.event],
  });
  const [row] = rows;
  return [200, { success: true, data: { contact: row.contact_id, event: row.id, timestamp: row.created_at } }];
});
