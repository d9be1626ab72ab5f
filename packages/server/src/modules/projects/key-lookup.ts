import { timingSafeEqual } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { LRUCache } from 'lru-cache';
import { preparedRows, raw, sql } from '../../db/query.js';
import type { Queryable } from '../../db/sql.js';
import type { AppDeps } from '../../deps.js';
import type { DeferredKey, KeyCheck, KeyType, ProjectRef } from '../../kit/caller.js';
import { forbidden, unauthorized } from '../../kit/errors.js';
import { applyRateLimit, currentWindow, rateLimitCtes } from '../rate-limits/public.js';
import { hashKey, keyTypeOf } from './keys.js';

/** A well-formed key, to be checked by the handler's own statement; undefined for anything else. */
export function deferredKey(key: string | undefined): DeferredKey | undefined {
  const keyType = key ? keyTypeOf(key) : undefined;
  return key && keyType ? { keyType, keyHash: hashKey(key) } : undefined;
}

/**
 * Indexed lookup by the key's hash, then a constant-time comparison of the key itself. The
 * same statement counts the request against the project's rate limit: one round trip.
 */
export async function findProjectByKey(db: Queryable, key: string, keyType: KeyType, rateLimitPerMinute: number) {
  const column = keyType === 'public' ? 'public' : 'secret';
  const limited = rateLimitPerMinute > 0;
  const rows = await preparedRows<ProjectRef & { key: string; hits: number | null }>(
    db,
    `auth.${column}.${limited ? 'counted' : 'plain'}`,
    sql`WITH p AS (
       SELECT id, name, disabled, disabled_reason AS "disabledReason", ${raw(column)}_key AS key
       FROM projects WHERE ${raw(column)}_key_hash = ${hashKey(key)}
     )${limited ? sql`, ${rateLimitCtes('p', currentWindow().window, 'key')}` : raw('')}
     SELECT p.*, ${raw(limited ? '(SELECT hits FROM hit)' : 'NULL::int')} AS hits FROM p`,
  );
  const row = rows[0];
  if (!row) return undefined;
  const stored = Buffer.from(row.key);
  const given = Buffer.from(key);
  if (stored.length !== given.length || !timingSafeEqual(stored, given)) return undefined;
  const project = { id: row.id, name: row.name, disabled: row.disabled, disabledReason: row.disabledReason };
  return { project, hits: row.hits };
}

/**
 * Hashes of keys that were found lately (this process, at most 10,000, for a minute). A deferred
 * key is checked by its handler's statement, after the body is read: the body is read only for a
 * key found here or by one indexed lookup, so a client without a key makes Pigeon read nothing.
 * The cache only decides whether reading is worth it: a key regenerated since is still refused by
 * the statement (and forgotten here).
 */
const knownKeyCaches = new WeakMap<object, LRUCache<string, true>>();
const knownKeys = (deps: AppDeps) => {
  let cache = knownKeyCaches.get(deps.db.pool);
  if (!cache) {
    cache = new LRUCache<string, true>({ max: 10_000, ttl: 60_000 });
    knownKeyCaches.set(deps.db.pool, cache);
  }
  return cache;
};

/** 401 before the body is read, unless the deferred key belongs to a project (or did a moment ago). */
export async function requireKnownKey(deps: AppDeps, key: DeferredKey): Promise<void> {
  const cache = knownKeys(deps);
  const id = key.keyHash.toString('base64');
  if (cache.has(id)) return;
  const column = raw(key.keyType === 'public' ? 'public_key_hash' : 'secret_key_hash');
  const rows = await preparedRows(
    deps.db.pool,
    `auth.known.${key.keyType}`,
    sql`SELECT 1 FROM projects WHERE ${column} = ${key.keyHash}`,
  );
  if (rows.length === 0) throw unauthorized('The API key is not valid', 'INVALID_API_KEY');
  cache.set(id, true);
}

/** Answers a deferred key exactly as the lookup here would have: 401, 403, or the rate limit. */
export function settleKeyCheck(deps: AppDeps, res: ServerResponse, check: KeyCheck, key?: DeferredKey): void {
  if (!check.found) {
    if (key) knownKeys(deps).delete(key.keyHash.toString('base64'));
    throw unauthorized('The API key is not valid', 'INVALID_API_KEY');
  }
  if (check.hits !== null)
    applyRateLimit(res, deps.config.rateLimitPerMinute, check.hits, currentWindow().resetSeconds);
  if (check.disabled) throw disabledProjectError(check.disabledReason);
}

/** 403 for a write to a disabled project (it can still read). */
export const disabledProjectError = (reason: string | null) =>
  forbidden('This project is disabled; it can read but not write', 'PROJECT_DISABLED', { details: { reason } });
